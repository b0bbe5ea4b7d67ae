"""Data modules: raw datasets → Arrow splits → tokenised batches, one LightningDataModule per source."""

from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.data.imdb import IMDBDataModule
from tabrasa.data.text_classification import TextClassificationDataModule

__all__ = ["IMDBDataModule", "TabrasaDataModule", "TextClassificationDataModule"]
