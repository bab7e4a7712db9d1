"""Result tables: a dict of equal-length numpy columns, convertible to a pandas DataFrame."""

from __future__ import annotations

from typing import Any, Dict

import numpy as np


class Table(Dict[str, np.ndarray]):
    """A table of results: column name -> numpy array, every column the same length.

    ``table.df`` (or ``table.to_pandas()``) gives a pandas DataFrame when pandas is installed.
    """

    @property
    def rows(self) -> int:
        """The number of rows."""
        for column in self.values():
            return int(column.shape[0])
        return 0

    def to_pandas(self) -> Any:
        """The table as a pandas DataFrame (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("Table.to_pandas needs pandas: pip install pandas") from e
        return pd.DataFrame({name: column for name, column in self.items()})

    @property
    def df(self) -> Any:
        """The table as a pandas DataFrame (needs pandas)."""
        return self.to_pandas()

    def __repr__(self) -> str:
        return f"Table({self.rows} rows: {', '.join(self.keys())})"


def as_tables(result: Dict[str, Any]) -> Dict[str, Any]:
    """Wraps every dict of numpy arrays in `result` (one level deep) in a Table."""
    out: Dict[str, Any] = {}
    for key, value in result.items():
        if (
            isinstance(value, dict)
            and value
            and all(isinstance(v, np.ndarray) for v in value.values())
        ):
            out[key] = Table(value)
        else:
            out[key] = value
    return out
