"""Inputs without labels for pretraining: any labelled data module's own (InputsOf), and larger sources
that install offline (UniProt, movie reviews, every Fashion-MNIST training image)."""

from tabrasa.data.unlabelled.base import UnlabelledDataModule
from tabrasa.data.unlabelled.fashion_mnist import UnlabelledFashionMNIST
from tabrasa.data.unlabelled.inputs_of import InputsOf
from tabrasa.data.unlabelled.movie_text import UnlabelledMovieReviews
from tabrasa.data.unlabelled.uniprot import UnlabelledUniProt

__all__ = [
    "InputsOf",
    "UnlabelledDataModule",
    "UnlabelledFashionMNIST",
    "UnlabelledMovieReviews",
    "UnlabelledUniProt",
]
