"""Text measures a policy uses: tokenizers, summarizers, and the prompts and writers that
ask a model."""
