"""Every source family by the name a user gives it; nothing is chosen by looking at the keys."""

from __future__ import annotations

from tabrasa.pretrained import ast_audio, bert, esm2, esm2_fair, gpt2, tabrasa_format, vit_hf, vit_timm
from tabrasa.pretrained.family import Family

FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        bert.FAMILY,
        gpt2.FAMILY,
        vit_hf.FAMILY,
        vit_timm.FAMILY,
        esm2.FAMILY,
        esm2_fair.FAMILY,
        ast_audio.FAMILY,
        tabrasa_format.FAMILY,
    )
}


def get_family(name: str) -> Family:
    if name not in FAMILIES:
        raise ValueError(f"pretrained family {name!r} is not known; choose one of {', '.join(FAMILIES)}")
    return FAMILIES[name]
