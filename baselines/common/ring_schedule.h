// Which segment a rank sends and receives in each step of a ring allreduce.
// Steps 0..n-2 are the reduce-scatter, steps n-1..2n-3 the allgather. In both
// phases rank r sends segment (r - g) mod n and receives (r - g - 1) mod n, so
// the segment a rank receives in step g is the one it forwards in step g+1.
#pragma once

namespace omnib {

inline int ring_steps(int n) { return 2 * (n - 1); }
inline bool ring_step_reduces(int n, int step) { return step < n - 1; }
inline int ring_send_segment(int rank, int n, int step) { return ((rank - step) % n + n) % n; }
inline int ring_recv_segment(int rank, int n, int step) { return ((rank - step - 1) % n + n) % n; }

}  // namespace omnib
