# The losses: what each computes of the distance of a prediction outside an
# interval's hinges, for the compiled kernels (the interval solver, the
# criterion, the node models, the linear model). See _loss.pyx, which also
# holds the registry the Python side reads (one entry per loss).

# A loss as a type. A function with a ``const Loss*`` parameter (a NULL
# pointer such as ``<const SquaredHinge*> NULL``: it only names the type) is
# compiled once per loss, every test of the loss (``if Loss is
# SquaredHinge``) resolved at compile time.
ctypedef struct LinearHinge:
    char unused
ctypedef struct SquaredHinge:
    char unused
ctypedef fused Loss:
    LinearHinge
    SquaredHinge

# The solver tag of each loss: which compiled variant a run-time choice
# (a registry entry, a criterion) dispatches to.
cpdef enum LossTag:
    LINEAR_HINGE_TAG = 0
    SQUARED_HINGE_TAG = 1
    N_LOSS_TAGS = 2         # tags are 0 .. N_LOSS_TAGS - 1


cdef inline double hinge_value(double distance, const Loss* loss) noexcept nogil:
    """Loss of a hinge at ``distance`` beyond its breakpoint (0 when <= 0)."""
    cdef double value = distance if distance > 0.0 else 0.0
    if Loss is SquaredHinge:
        value = value * value
    return value


cdef inline double hinge_slope(double distance, const Loss* loss) noexcept nogil:
    """Derivative of ``hinge_value`` in ``distance`` (0 at the breakpoint)."""
    cdef double slope = 1.0 if distance > 0.0 else 0.0
    if Loss is SquaredHinge:
        slope = 2.0 * distance if distance > 0.0 else 0.0
    return slope


cdef inline double hinge_curvature(double distance, const Loss* loss) noexcept nogil:
    """Second derivative of ``hinge_value`` in ``distance`` (0 at the breakpoint)."""
    cdef double curvature = 0.0
    if Loss is SquaredHinge:
        curvature = 2.0 if distance > 0.0 else 0.0
    return curvature


cdef inline double hinge_change(double distance, double new_distance,
                                const Loss* loss) noexcept nogil:
    """``hinge_value(new_distance) - hinge_value(distance)``; for the squared
    hinge as a product of differences (no cancellation of nearly equal
    squares for small steps)."""
    distance = distance if distance > 0.0 else 0.0
    new_distance = new_distance if new_distance > 0.0 else 0.0
    cdef double change = new_distance - distance
    if Loss is SquaredHinge:
        change = change * (new_distance + distance)
    return change


cdef inline double interval_loss(double lower, double upper, double prediction,
                                 const Loss* loss) noexcept nogil:
    """Loss of ``prediction`` for an interval whose hinges break at ``lower``
    and ``upper`` (infinite ones never active)."""
    return hinge_value(lower - prediction, loss) + hinge_value(prediction - upper, loss)


# The same, for a loss known by its tag at run time (one branch per call;
# the kernels that loop over rows take the fused versions above).
cdef inline double tagged_interval_loss(LossTag tag, double lower, double upper,
                                        double prediction) noexcept nogil:
    if tag == SQUARED_HINGE_TAG:
        return interval_loss(lower, upper, prediction, <const SquaredHinge*> NULL)
    return interval_loss(lower, upper, prediction, <const LinearHinge*> NULL)


cdef inline void tagged_derivatives(LossTag tag, double lower, double upper,
                                    double prediction, double* slope,
                                    double* curvature) noexcept nogil:
    """The loss's derivative and curvature in the prediction."""
    if tag == SQUARED_HINGE_TAG:
        slope[0] = (hinge_slope(prediction - upper, <const SquaredHinge*> NULL)
                    - hinge_slope(lower - prediction, <const SquaredHinge*> NULL))
        curvature[0] = (hinge_curvature(prediction - upper, <const SquaredHinge*> NULL)
                        + hinge_curvature(lower - prediction, <const SquaredHinge*> NULL))
    else:
        slope[0] = (hinge_slope(prediction - upper, <const LinearHinge*> NULL)
                    - hinge_slope(lower - prediction, <const LinearHinge*> NULL))
        curvature[0] = (hinge_curvature(prediction - upper, <const LinearHinge*> NULL)
                        + hinge_curvature(lower - prediction, <const LinearHinge*> NULL))
