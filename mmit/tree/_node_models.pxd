# Node models: what a tree's nodes predict beyond their constant. See
# _node_models.pyx. A tree holds one NodeModels payload (or None for a tree
# of constants) and only ever calls `predict` on it; pruning, export and
# model files go through its Python methods (take, describe, state).

from libc.stdint cimport int64_t

from .._utils._typedefs cimport intp_t


cdef class NodeModels:
    # The interface (abstract).
    cdef readonly intp_t n_nodes              # nodes of the tree it belongs to
    cdef readonly intp_t n_features           # features of the rows it predicts

    cdef double predict(self, intp_t node, double value,
                        const double* row) noexcept nogil


cdef class LinearNodeModels(NodeModels):
    # node i predicts value[i] + slopes[model_of_node[i]] . (x - center), a
    # missing x_j counting as center[j]; model -1: the constant
    cdef const int64_t* model_of_node         # per node (inside _models)
    cdef const double* slope_table            # (n_models, n_features), C order: _slopes
    cdef const double* model_center           # (n_features,) (inside _center)
    cdef const double* model_offset           # per model: -slopes . center: _offsets
    cdef object _models
    cdef object _slopes
    cdef object _center
    cdef object _offsets
