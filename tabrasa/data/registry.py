"""Dataset names → data module classes and their presets, for `tabrasa data prepare NAME` and `tabrasa data
list`.

A plain dict: a new dataset adds one line. A class with a `check_source()` classmethod reports whether its
raw files are installed (returning where they are, raising DataSourceMissingError naming the package if not).
A data module never picks its tokenizer, so `prepare NAME` builds the data section of the dataset's shipped
preset (`preset`, under configs/), tokenizer included: exactly the splits that preset trains on.
"""

from __future__ import annotations

from dataclasses import dataclass

from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.data.fashion_mnist import FashionMNISTDataModule
from tabrasa.data.imdb import IMDBDataModule
from tabrasa.data.keywords import KeywordsDataModule
from tabrasa.data.psortb import PSORTbDataModule
from tabrasa.data.uniprot_localisation import UniProtLocalisationDataModule


@dataclass(frozen=True)
class Dataset:
    """module: the data module class. preset: its shipped config, relative to configs/."""

    module: type[TabrasaDataModule]
    preset: str


DATASETS: dict[str, Dataset] = {
    "imdb": Dataset(IMDBDataModule, "text/imdb.yaml"),
    "fashion_mnist": Dataset(FashionMNISTDataModule, "image/fashion_mnist.yaml"),
    "psortb": Dataset(PSORTbDataModule, "protein/psortb.yaml"),
    "uniprot_localisation": Dataset(UniProtLocalisationDataModule, "protein/uniprot_localisation.yaml"),
    "keywords": Dataset(KeywordsDataModule, "audio/keywords.yaml"),
}
