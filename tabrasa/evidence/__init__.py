"""Evidence: the experiments that test the claim (learning curves, the articles claims, transfer)."""
