"""tabrasa: one transformer backbone, tokenizers for every modality, and the evidence for the claim."""

__version__ = "0.1.0"
