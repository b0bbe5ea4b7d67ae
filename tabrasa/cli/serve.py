"""`tabrasa serve RUN`: one trained run behind LitServe, with its browser page (tabrasa/serve/)."""

from tabrasa.serve.command import main

__all__ = ["main"]
