"""What builds and names policies: the protocols and promises, parameters, the registry,
plug-in imports and the trust they need."""
