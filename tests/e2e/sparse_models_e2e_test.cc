// End-to-end: the wire models of the sparse baselines (allgather,
// sparcml-split, sparcml-recdbl, oktopk) count every rank's actual non-zeros
// the way each algorithm sends them, so they must agree with the measured
// bytes to the byte, per rank max and total, on every workload.
#include <gtest/gtest.h>

#include "tests/support/e2e_fixture.h"

namespace omnib {
namespace {

using testing::Case;

const testing::AlgoFamily kSparse({"allgather", "sparcml-split", "sparcml-recdbl", "oktopk"}, 120);

class SparseModelIsExact : public ::testing::TestWithParam<Case> {};

TEST_P(SparseModelIsExact, ModelEqualsMeasuredBytes) { testing::expect_models_exact(kSparse, GetParam()); }

INSTANTIATE_TEST_SUITE_P(
    Workloads, SparseModelIsExact,
    ::testing::Values(
        // Pair streams of several frames (32766 pairs each for 4-byte values).
        Case{"blocks", {"--nodes", "4", "-b", "4M", "-e", "4M", "--density", "0.1"}},
        Case{"scattered", {"--nodes", "3", "-b", "2M", "-e", "2M", "--density", "0.01", "--workload", "scattered"}},
        // Each rank's pairs are sparse, the sums of 2 and more ranks dense:
        // every algorithm switches form part-way.
        Case{"scattered_dense_switch",
             {"--nodes", "4", "-b", "1M", "-e", "1M", "--density", "0.2", "--workload", "scattered"}},
        Case{"topk", {"--nodes", "5", "-b", "2M", "-e", "2M", "--density", "0.02", "--workload", "topk"}},
        Case{"zipf_bf16", {"--nodes", "4", "-b", "4M", "-e", "4M", "--density", "0.02", "-d", "bf16", "--workload", "zipf:1.1"}},
        // Skewed regions: oktopk's split needs its fine histogram round.
        Case{"zipf_sorted",
             {"--nodes", "4", "-b", "4M", "-e", "4M", "--density", "0.01", "--block-size", "64", "--workload",
              "zipf:1.1:sorted"}},
        // 100003 elements (a prime) in blocks of 100: nothing divides evenly.
        Case{"odd_count", {"--nodes", "3", "-b", "400012", "-e", "400012", "--density", "0.2", "--block-size", "100"}},
        Case{"in_place_int32",
             {"--nodes", "4", "-b", "1M", "-e", "1M", "--density", "0.2", "--inplace", "-d", "int32"}},
        Case{"preset_dense_prefix", {"--nodes", "3", "-b", "4M", "-e", "4M", "--workload", "preset:lstm-gbw"}},
        Case{"one_rank", {"--nodes", "1", "-b", "64K", "-e", "64K", "--density", "0.3"}},
        Case{"two_ranks", {"--nodes", "2", "-b", "64K", "-e", "64K", "--density", "0.3"}},
        Case{"dense_five_ranks", {"--nodes", "5", "-b", "1M", "-e", "1M", "--density", "1"}},
        Case{"disjoint_half", {"--nodes", "4", "-b", "1M", "-e", "1M", "--density", "0.01", "--overlap", "none", "-d", "half"}},
        Case{"dedicated_aggregator_ranks",
             {"--nodes", "3", "--aggregators", "2", "-b", "1M", "-e", "1M", "--density", "0.05"}},
        // Tiny tensors: fewer elements than histogram buckets, empty slices.
        Case{"several_sizes", {"--nodes", "5", "-b", "16", "-e", "256K", "-f", "16", "--density", "0.3"}, 4}),
    testing::case_name);

}  // namespace
}  // namespace omnib
