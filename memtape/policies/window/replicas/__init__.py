"""Replicas of the compaction policies agents run in production (Anthropic's context
editing and compaction, Claude Code, Codex, LangChain, observation masking), each an
existing policy of the window's room with the upstream product's defaults and knobs."""
