"""Dataset names → data module classes, for `tabrasa data prepare NAME` and `tabrasa data list`.

A plain dict: a new dataset adds one line. A class with a `check_source()` classmethod reports whether its
raw files are installed (returning where they are, raising DataSourceMissingError naming the package if not).
"""

from __future__ import annotations

from tabrasa.data.datamodule import TabrasaDataModule
from tabrasa.data.fashion_mnist import FashionMNISTDataModule
from tabrasa.data.imdb import IMDBDataModule
from tabrasa.data.keywords import KeywordsDataModule
from tabrasa.data.psortb import PSORTbDataModule
from tabrasa.data.uniprot_localisation import UniProtLocalisationDataModule

DATASETS: dict[str, type[TabrasaDataModule]] = {
    "imdb": IMDBDataModule,
    "fashion_mnist": FashionMNISTDataModule,
    "psortb": PSORTbDataModule,
    "uniprot_localisation": UniProtLocalisationDataModule,
    "keywords": KeywordsDataModule,
}
