"""The explain API: decision records to plain-English explanations, as ``greensched
explain`` renders them."""

from __future__ import annotations

from typing import Any, Dict, Union

from . import _core

Record = Union[Dict[str, Any], str]


def explain(record: Record) -> str:
    """The explanation of one decision record (a dict, or one JSON line)."""
    return _core.explain_text(record)


def explain_facts(record: Record) -> Dict[str, Any]:
    """The facts behind the explanation: ``pod``, ``placed``, ``sentences`` and, for a pod that
    could not be placed, ``nodes_total`` and ``reason_counts``."""
    return _core.explain_facts(record)


def is_failed(record: Record) -> bool:
    """Whether the record is of a pod that could not be placed."""
    return _core.is_failed_placement(record)
