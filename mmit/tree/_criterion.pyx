"""The split criterion of Maximum Margin Interval Trees, and its interface.

:class:`Criterion` is what the tree builder asks of a loss, in the manner
of scikit-learn's ``Criterion`` (the builder grows every tree through it
and knows no loss; a criterion answers for the rows of one node at a
time):

- ``node_init``: prepare the node (for the hinge losses: give its
  breakpoints dense solver slots in one walk of its sorted breakpoint list);
- ``reset``, ``add``, ``sweep``, ``minimum``: the optimal constant of a
  growing set of rows; a forward sweep over a node's rows in the order of a
  feature gives the optimal cost of every left part, a backward sweep of
  every right part (O(1) amortised per row);
- ``node_cost``: the exact cost of a node for a given value;
- ``partition_targets``: follow a split in the criterion's per-node lists;
- ``targets_minimum``: a node's optimum straight from its sorted targets
  (two sequential passes, for split searches that do not sweep rows);
- ``gradients``: each row's derivatives, for histogram split searches;
- ``settle``: a node stays a leaf, with the targets of its range.

:class:`HingeCriterion` implements it for every loss of ``_loss`` on the
interval solver of ``mmit._loss._solver``: the loss's tag (of its
registry entry), given once when the builder makes the criterion, selects
the solver variant compiled for it.

Boosting stages. A stage's tree is grown on the residual intervals of the
training rows around the current predictions, and adding the tree moves
every row of a leaf by the same amount: the leaf's shrunk value. A
criterion that keeps its leaves (``keep_leaves``, a builder's
``stage_criterion``) serves every stage of a fit: after each build its
hinges lie leaf by leaf, each leaf's in increasing order, and
:meth:`HingeCriterion.advance` moves each leaf's breakpoints by that
amount (which keeps them in order) and merges the leaves' lists into one
increasing list (a k-way merge, its output shared between threads:
``_stages``), and
moves each row's breakpoints alike: the next stage's sorted targets in
O(H log k) for H hinges and k leaves, without sorting them again.
"""

from cython.parallel cimport prange
from libc.math cimport INFINITY
from libc.stdint cimport int32_t
from libcpp.algorithm cimport sort as std_sort

from .._utils._parallel cimport PARALLEL_MIN_ROWS, threads_for

import numpy as np

from .._loss._loss cimport LossTag, check_loss_tag, tagged_derivatives, tagged_interval_loss
from ._partition cimport stable_partition_parallel
from ._stages cimport merge_moved_leaves
from .._loss._pieces cimport NO_SLOT
from .._loss._solver cimport HingeEntry, Interval, SolverWorkspace, solver_insert
from .._loss._solver cimport solver_minimum, solver_reset, solver_sweep, sorted_minimum
from .._utils._typedefs cimport check_index

from .._utils._buffers import empty
from .._loss._solver import hinge_positions, sorted_hinges
from .._utils._checks import check_row_count, check_same_length


cdef enum:
    ROWS_PER_BLOCK = 1 << 14    # hinges copied, or rows moved, in order by one thread


cdef bint starts_before(const TargetRange& a, const TargetRange& b) noexcept nogil:
    return a.start < b.start


cdef Interval _dummy
INTERVAL_DTYPE = np.dtype({
    "names": ["lower_position", "upper_position", "weight", "lower_slot", "upper_slot"],
    "formats": [np.float64, np.float64, np.float64, np.int32, np.int32],
    "offsets": [
        <Py_ssize_t>(<char*>&_dummy.lower_position - <char*>&_dummy),
        <Py_ssize_t>(<char*>&_dummy.upper_position - <char*>&_dummy),
        <Py_ssize_t>(<char*>&_dummy.weight - <char*>&_dummy),
        <Py_ssize_t>(<char*>&_dummy.lower_slot - <char*>&_dummy),
        <Py_ssize_t>(<char*>&_dummy.upper_slot - <char*>&_dummy),
    ],
    "itemsize": sizeof(Interval),
})


cdef class HingeTargets:
    """Interval targets as hinge breakpoints, sorted once for every tree.

    Parameters
    ----------
    lower, upper : ndarray of shape (n_samples,), float64
        Validated interval bounds (``-inf`` / ``+inf`` for censored ones).
    margin : float
        Validated margin: a lower bound ``l`` has its breakpoint at ``l +
        margin``, an upper bound ``u`` at ``u - margin``; an exact value
        (``l == u``) at ``l``.

    buffers : Buffers, default=None
        Where the arrays live (``_buffers``): the targets of one boosting
        stage after another, each done with before the next is made.
    n_threads : int, default=1
        Threads computing and reading back the breakpoints.
    single_build : bool, default=False
        One tree grows on these targets: the criterion made from them
        takes the breakpoints, which are then let go (the bounds stay).

    Every finite bound is a hinge numbered ``2 * row + is_upper``; the
    finite hinges are listed by increasing breakpoint, ties by number
    (``hinge_order``, with their breakpoints in ``hinge_position``). The
    arrays are shared, read-only, by every tree grown on the targets.
    """

    def __cinit__(self, const double[::1] lower, const double[::1] upper, double margin,
                  buffers=None, int n_threads=1, bint single_build=False):
        cdef intp_t n = lower.shape[0]
        check_same_length("upper", upper, "lower", n)
        check_row_count(n)
        lower_position, upper_position = hinge_positions(lower, upper, margin, buffers,
                                                         n_threads)
        self.hinge_order, self.hinge_position = sorted_hinges(lower, upper, margin,
                                                              buffers, n_threads)
        self.n_samples = n
        self.margin = margin
        self.single_build = single_build
        self.taken = False
        self.lower_position = lower_position
        self.upper_position = upper_position
        self._bounds = (np.asarray(lower), np.asarray(upper))

    @property
    def bounds(self):
        """The interval bounds: (lower, upper)."""
        return self._bounds

    cdef void let_go(self):
        """Let the breakpoints go: the one criterion of single-build targets
        has them."""
        self.taken = True
        self.lower_position = self.upper_position = self.hinge_position = np.empty(0)
        self.hinge_order = np.empty(0, dtype=np.int32)

    def __reduce__(self):
        return (HingeTargets, (*self._bounds, self.margin, None, 1, self.single_build))


cdef class Criterion:
    """The interface between the tree builder and a loss (abstract).

    Every method runs without the GIL and trusts its arguments: ``rows``
    are training rows of positive weight, ``report``, ``costs`` and
    ``values`` hold ``count`` entries.
    """

    cdef void node_init(self, intp_t target_start, intp_t target_end) noexcept nogil:
        """Prepare the node whose targets are [target_start, target_end)."""

    cdef void reset(self) noexcept nogil:
        """Forget every row added since the last reset (within the node)."""

    cdef void add(self, const int32_t* rows, intp_t count) noexcept nogil:
        """Add ``count`` rows of the current node. O(count)."""

    cdef void sweep(self, const int32_t* rows, intp_t count, bint reverse,
                    const unsigned char* report, double* costs,
                    double* values) noexcept nogil:
        """Add ``rows[t]`` for t = 0 .. count-1 (back from count-1 when
        ``reverse``); after each ``t`` with ``report[t]`` write the optimal
        cost of the rows added so far to ``costs[t]`` and the optimal value
        to ``values[t]`` (left untouched while the rows have no finite
        bound). O(count)."""

    cdef bint minimum(self, double* value, double* cost) noexcept nogil:
        """Optimal value and cost of the rows added so far; False (cost 0, no
        value) when they have no finite bound. O(1)."""
        return False

    cdef double node_cost(self, const int32_t* rows, intp_t count, double value,
                          double* weight) noexcept nogil:
        """Exact total loss of predicting ``value`` for ``rows``, and (in
        ``weight``) their total weight. O(count)."""
        return 0.0

    cdef void row_costs(self, const int32_t* rows, intp_t count, double value,
                        double* costs) noexcept nogil:
        """The loss of predicting ``value`` for each of ``rows`` in
        ``costs[row]`` (a node's rows at one of its bounds). O(count)."""

    cdef intp_t partition_targets(self, intp_t target_start, intp_t target_end,
                                  const unsigned char* goes_left,
                                  int n_threads) noexcept nogil:
        """Partition the node's targets stably by ``goes_left[row]`` (on up to
        ``n_threads`` threads, the same result); return how many go left.
        O(target_end - target_start)."""
        return 0

    cdef bint targets_minimum(self, intp_t target_start, intp_t target_end,
                              double* value, double* cost) noexcept nogil:
        """Optimal value and cost of the rows whose targets are [target_start,
        target_end) (a node's, or a child's once ``partition_targets`` has
        split them), without ``node_init``; False (cost 0, no value) without a
        finite bound. O(target_end - target_start)."""
        return False

    cdef void gradients(self, double* gradient, double* curvature,
                        int n_threads) noexcept nogil:
        """Each row's weighted derivative and curvature of its loss at the
        prediction 0 (the loss's own: ``_loss.pxd``), for split searches
        that work from them (histograms), on ``n_threads`` threads.
        O(n_samples)."""

    cdef void settle(self, intp_t target_start, intp_t target_end) noexcept nogil:
        """A node whose targets are [target_start, target_end) stays a leaf."""


cdef class HingeCriterion(Criterion):
    """The criterion of a hinge loss on the interval solver.

    Parameters
    ----------
    targets : HingeTargets
    sample_weight : ndarray of shape (n_samples,)
        Non-negative weights; rows of weight 0 take no part.
    loss : int
        The loss's tag (``mmit._loss._loss.LOSSES[name].tag``); a ValueError
        names an unknown one.
    sweeps : bool, default=True
        Whether rows are swept through the solver (``node_init``, ``add``,
        ``sweep``, ``minimum``): without, its slots are not allocated.
    buffers : Buffers, default=None
        Where the working arrays live (``_buffers``).
    n_threads : int, default=1
        Threads copying the rows and hinges in.
    keep_leaves : bool, default=False
        Serve one build after another (boosting stages): each build's leaves
        are kept, for :meth:`advance` to move the targets by the tree's
        predictions (module doc).
    """

    def __cinit__(self, HingeTargets targets, const double[::1] sample_weight, int loss,
                  bint sweeps=True, buffers=None, int n_threads=1, bint keep_leaves=False):
        if targets.taken:
            raise ValueError("the targets of a single build serve one criterion, which "
                             "has taken their breakpoints.")
        cdef intp_t n = targets.n_samples, n_all = targets.hinge_order.shape[0]
        cdef intp_t i, k, block, n_hinges = 0, at
        cdef intp_t n_blocks = (n_all + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK
        cdef int32_t hinge
        cdef double weight
        check_same_length("sample_weight", sample_weight, "the targets", n)
        check_loss_tag(loss)
        self.loss = <LossTag> loss
        cdef int block_threads = threads_for(n_all, PARALLEL_MIN_ROWS, n_threads)
        cdef int row_threads = threads_for(n, PARALLEL_MIN_ROWS, n_threads)
        # the finite hinges of positive-weight rows, block by block of the
        # sorted hinges: how many each block holds, then where its go
        starts_array = np.zeros(n_blocks + 1, dtype=np.intp)
        cdef intp_t[::1] starts = starts_array
        cdef const int32_t[::1] order = targets.hinge_order
        for block in prange(n_blocks, nogil=True, num_threads=block_threads,
                            schedule="static"):
            for k in range(block * ROWS_PER_BLOCK,
                           min(n_all, (block + 1) * ROWS_PER_BLOCK)):
                starts[block + 1] += sample_weight[order[k] >> 1] > 0.0
        for block in range(n_blocks):
            starts[block + 1] += starts[block]
        n_hinges = starts[n_blocks]
        intervals = empty(buffers, "criterion.intervals", max(n, 1), INTERVAL_DTYPE)
        # hinge entries, as raw bytes (never seen from Python)
        hinges = empty(buffers, "criterion.hinges", max(n_hinges, 1) * sizeof(HingeEntry),
                       np.uint8)
        scratch = empty(buffers, "criterion.scratch", hinges.shape[0], np.uint8)
        cdef intp_t n_slots = max(n_hinges if sweeps else 0, 1)
        slot_pos = empty(buffers, "criterion.slot_pos", n_slots)
        self._buffers = (intervals, hinges, scratch, slot_pos)
        cdef Interval[::1] interval_view = intervals
        cdef unsigned char[::1] hinge_view = hinges
        cdef unsigned char[::1] scratch_view = scratch
        cdef double[::1] slot_view = slot_pos
        cdef Interval* rows = &interval_view[0]
        cdef HingeEntry* entries = <HingeEntry*> &hinge_view[0]
        self.intervals = rows
        self.hinges = entries
        self.scratch = <HingeEntry*> &scratch_view[0]
        self.slot_pos = &slot_view[0]
        self._workspace = SolverWorkspace(n_slots)
        self.solver = &self._workspace.state
        self.n_samples = n
        self.n_targets = n_hinges
        self.n_slots = 0
        self.sweeps = sweeps
        self.keeps_leaves = keep_leaves
        for i in prange(n, nogil=True, num_threads=row_threads, schedule="static"):
            rows[i].lower_position = targets.lower_position[i]
            rows[i].upper_position = targets.upper_position[i]
            rows[i].weight = sample_weight[i]
            rows[i].lower_slot = NO_SLOT
            rows[i].upper_slot = NO_SLOT
        for block in prange(n_blocks, nogil=True, num_threads=block_threads,
                            schedule="static"):
            at = starts[block]
            for k in range(block * ROWS_PER_BLOCK,
                           min(n_all, (block + 1) * ROWS_PER_BLOCK)):
                hinge = order[k]
                weight = sample_weight[hinge >> 1]
                if weight > 0.0:
                    entries[at].position = targets.hinge_position[k]
                    entries[at].weight = weight
                    entries[at].hinge = hinge
                    at = at + 1
        if targets.single_build:
            targets.let_go()

    cdef void node_init(self, intp_t target_start, intp_t target_end) noexcept nogil:
        """Give the node's breakpoints dense slots in one walk of its sorted
        breakpoint list. O(target_end - target_start)."""
        cdef intp_t k, n_slots = 0
        cdef int32_t hinge
        cdef Interval* interval
        cdef double position, previous = -INFINITY
        for k in range(target_start, target_end):
            hinge = self.hinges[k].hinge
            position = self.hinges[k].position
            check_index(hinge >> 1, self.n_samples)
            interval = &self.intervals[hinge >> 1]
            if n_slots == 0 or position != previous:
                self.slot_pos[n_slots] = position
                n_slots += 1
                previous = position
            if hinge & 1:
                interval.upper_slot = <int32_t>(n_slots - 1)
            else:
                interval.lower_slot = <int32_t>(n_slots - 1)
        self.n_slots = n_slots

    cdef void reset(self) noexcept nogil:
        solver_reset(self.solver, self.slot_pos, self.n_slots)

    cdef intp_t partition_targets(self, intp_t target_start, intp_t target_end,
                                  const unsigned char* goes_left,
                                  int n_threads) noexcept nogil:
        # hinge 2 * row + is_upper follows its row
        cdef intp_t count = target_end - target_start
        return stable_partition_parallel(
            self.hinges + target_start, count, goes_left, 1, self.scratch + target_start,
            self.n_samples, threads_for(count, PARALLEL_MIN_ROWS, n_threads))

    cdef bint targets_minimum(self, intp_t target_start, intp_t target_end,
                              double* value, double* cost) noexcept nogil:
        return sorted_minimum(self.hinges + target_start, target_end - target_start,
                              value, cost, self.loss)

    cdef void add(self, const int32_t* rows, intp_t count) noexcept nogil:
        solver_insert(self.solver, self.intervals, rows, count, self.loss)

    cdef void sweep(self, const int32_t* rows, intp_t count, bint reverse,
                    const unsigned char* report, double* costs,
                    double* values) noexcept nogil:
        solver_sweep(self.solver, self.intervals, rows, count, reverse, report, costs,
                     values, self.loss)

    cdef bint minimum(self, double* value, double* cost) noexcept nogil:
        return solver_minimum(self.solver, value, cost, self.loss)

    cdef double node_cost(self, const int32_t* rows, intp_t count, double value,
                          double* weight) noexcept nogil:
        cdef intp_t k
        cdef double total = 0.0, total_weight = 0.0
        cdef const Interval* interval
        for k in range(count):
            check_index(rows[k], self.n_samples)
            interval = &self.intervals[rows[k]]
            total += interval.weight * tagged_interval_loss(
                self.loss, interval.lower_position, interval.upper_position, value)
            total_weight += interval.weight
        weight[0] = total_weight
        return total

    cdef void row_costs(self, const int32_t* rows, intp_t count, double value,
                        double* costs) noexcept nogil:
        cdef intp_t k
        cdef const Interval* interval
        for k in range(count):
            check_index(rows[k], self.n_samples)
            interval = &self.intervals[rows[k]]
            costs[rows[k]] = interval.weight * tagged_interval_loss(
                self.loss, interval.lower_position, interval.upper_position, value)

    cdef void settle(self, intp_t target_start, intp_t target_end) noexcept nogil:
        cdef TargetRange leaf
        if self.keeps_leaves:
            leaf.start = target_start
            leaf.end = target_end
            self.leaves.push_back(leaf)

    def hinge_entries(self):
        """The targets as the criterion lists them (after a build, leaf by
        leaf; after :meth:`advance`, in increasing order): their breakpoints,
        weights and hinge numbers (``2 * row + is_upper``), as arrays."""
        cdef intp_t k
        positions = np.empty(self.n_targets)
        weights = np.empty(self.n_targets)
        hinges = np.empty(self.n_targets, dtype=np.int32)
        for k in range(self.n_targets):
            positions[k] = self.hinges[k].position
            weights[k] = self.hinges[k].weight
            hinges[k] = self.hinges[k].hinge
        return positions, weights, hinges

    def weighs_alike(self, const double[::1] sample_weight):
        """Whether the criterion's rows have these weights."""
        cdef intp_t i
        if sample_weight.shape[0] != self.n_samples:
            return False
        for i in range(self.n_samples):
            if self.intervals[i].weight != sample_weight[i]:
                return False
        return True

    def advance(self, const double[::1] row_shifts, int n_threads=1):
        """Move the targets down by the last build's tree's predictions: each
        row's breakpoints by ``row_shifts[row]`` (what its prediction grows
        by), so that the criterion holds the residual intervals around the
        new predictions, its hinges in increasing order (module doc); the
        same whatever ``n_threads``. Every row of a leaf of that tree must
        have the same shift. Needs ``keep_leaves`` and one call after each
        build (ValueError otherwise). O(n + H log k) for n rows, H hinges and
        k leaves.

        Returns
        -------
        loss : float
            The rows' weighted loss at the new predictions (the sum over the
            rows of their weight times their loss at 0 once moved).
        """
        cdef intp_t n = self.n_samples, n_leaves = self.leaves.size(), k, i
        cdef intp_t at = 0
        cdef bint covered = True
        if not self.keeps_leaves:
            raise ValueError("advance needs a criterion made with keep_leaves=True.")
        if row_shifts.shape[0] != n:
            raise ValueError(f"row_shifts has {row_shifts.shape[0]} entries for {n} rows.")
        # the leaves in the order of their targets, which they cover once (a
        # leaf without targets may lie anywhere)
        std_sort(self.leaves.begin(), self.leaves.end(), starts_before)
        for k in range(n_leaves):
            if self.leaves[k].end == self.leaves[k].start:
                continue
            if self.leaves[k].start != at:
                covered = False
                break
            at = self.leaves[k].end
        if not covered or at != self.n_targets:
            self.leaves.clear()
            raise ValueError("the criterion's leaves do not cover its targets: advance "
                             "it once after each build.")
        cdef Interval* intervals = self.intervals
        # each row moved, and the weighted sum of its loss there (by blocks of
        # rows, each summed in order, then the blocks in order)
        cdef intp_t n_blocks = (n + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK, block
        cdef double block_loss, total = 0.0
        sums_array = np.empty(max(n_blocks, 1))
        cdef double[::1] sums = sums_array
        cdef LossTag loss = self.loss
        for block in prange(n_blocks, nogil=True,
                            num_threads=threads_for(n, PARALLEL_MIN_ROWS, n_threads),
                            schedule="static"):
            block_loss = 0.0
            for i in range(block * ROWS_PER_BLOCK, min(n, (block + 1) * ROWS_PER_BLOCK)):
                intervals[i].lower_position -= row_shifts[i]
                intervals[i].upper_position -= row_shifts[i]
                block_loss = block_loss + intervals[i].weight * tagged_interval_loss(
                    loss, intervals[i].lower_position, intervals[i].upper_position, 0.0)
            sums[block] = block_loss
        for block in range(n_blocks):
            total += sums[block]
        if merge_moved_leaves(self.hinges, self.scratch, self.leaves.data(), n_leaves,
                              self.n_targets, &row_shifts[0] if n else NULL, n,
                              threads_for(self.n_targets, PARALLEL_MIN_ROWS, n_threads)):
            # the merged list becomes the targets
            self.hinges, self.scratch = self.scratch, self.hinges
        self.leaves.clear()
        return total

    cdef void gradients(self, double* gradient, double* curvature,
                        int n_threads) noexcept nogil:
        cdef intp_t i
        cdef const Interval* intervals = self.intervals
        cdef LossTag loss = self.loss
        for i in prange(self.n_samples, num_threads=n_threads, schedule="static"):
            tagged_derivatives(loss, intervals[i].lower_position,
                               intervals[i].upper_position, 0.0, &gradient[i],
                               &curvature[i])
            gradient[i] = gradient[i] * intervals[i].weight
            curvature[i] = curvature[i] * intervals[i].weight
