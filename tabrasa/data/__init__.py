"""Data modules: raw datasets → Arrow splits → tokenised batches, one LightningDataModule per source."""

from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.data.fashion_mnist import FashionMNISTDataModule
from tabrasa.data.folders import AudioFolderDataModule, ImageFolderDataModule
from tabrasa.data.hub import HubAudioDataModule, HubImageDataModule, HubProteinDataModule, HubTextDataModule
from tabrasa.data.image_classification import ImageClassificationDataModule
from tabrasa.data.imdb import IMDBDataModule
from tabrasa.data.joint import JointDataModule
from tabrasa.data.keywords import KeywordsDataModule
from tabrasa.data.protein_classification import ProteinClassificationDataModule
from tabrasa.data.psortb import PSORTbDataModule
from tabrasa.data.text_classification import TextClassificationDataModule
from tabrasa.data.uniprot_localisation import UniProtLocalisationDataModule
from tabrasa.data.user_data import FastaDataModule, TextFileDataModule

__all__ = [
    "AudioFolderDataModule",
    "FashionMNISTDataModule",
    "FastaDataModule",
    "HubAudioDataModule",
    "HubImageDataModule",
    "HubProteinDataModule",
    "HubTextDataModule",
    "IMDBDataModule",
    "ImageClassificationDataModule",
    "ImageFolderDataModule",
    "JointDataModule",
    "KeywordsDataModule",
    "PSORTbDataModule",
    "ProteinClassificationDataModule",
    "TabrasaDataModule",
    "TextClassificationDataModule",
    "TextFileDataModule",
    "UniProtLocalisationDataModule",
]
