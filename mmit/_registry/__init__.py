"""The public estimators of mmit in one list (``_estimators``): what
``mmit`` exports, model files hold, the command line compares and the API
reference lists."""

from ._estimators import (
    ESTIMATORS,
    SECTIONS,
    CommandLineModel,
    Estimator,
    Example,
    command_line_models,
    exported,
    model_kinds,
)

__all__ = ["ESTIMATORS", "SECTIONS", "CommandLineModel", "Estimator", "Example",
           "command_line_models", "exported", "model_kinds"]
