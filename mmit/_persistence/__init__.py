"""Model files: fitted models saved as arrays and JSON, without pickle
(``_model_files``: the format, its versions, the checked reads)."""

from ._model_files import VERSION, load_model, save_model

__all__ = ["VERSION", "load_model", "save_model"]
