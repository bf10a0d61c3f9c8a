"""What every part of mmit shares, owned by no algorithm: the index types and
thread and sort helpers the kernels cimport (``_typedefs``, ``_parallel``,
``_sorting``), the checks the kernels make of what they index by
(``_checks``), reusable working arrays (``_buffers``), the validation of
users' input (``_validation``: targets, weights, margins, thresholds and
times; ``_categorical``: data frames and categorical features), the
interval scores every estimator is scored by (``_scores``), the
estimators' shared bases (``_base``: the
mixin of every interval regressor, the searches' results), shared docstring
sections (``_docstrings``) and files that replace a user's file
(``_files``).

Nothing here imports another part of mmit.
"""
