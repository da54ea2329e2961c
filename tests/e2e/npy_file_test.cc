// Crafted .npy files: every bad header is a usage error that names the file
// and what is wrong, found before anything is allocated; through the binary,
// exit 2 at once (never a crash, never a wait on a FIFO).
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/cli_runner.h"
#include "tests/support/npy_test_files.h"
#include "tools/workloads/npy_file.h"
#include "tools/workloads/npy_workload.h"

namespace omnib {
namespace {

using testing::npy_bytes;

constexpr const char* kName = "crafted.npy";

Result<NpyHeader> parse(const std::string& file, DType dtype = DType::kFloat32) {
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(file.data()), file.size());
  return parse_npy_header(bytes, file.size(), dtype, kName);
}

TEST(NpyHeader, ParsesWhatNumpyWrites) {
  const std::string v1 = npy_bytes("<f4", "(40, 25)", std::string(4000, '\0'));
  auto one = parse(v1);
  ASSERT_TRUE(one.is_ok()) << one.status().message();
  EXPECT_EQ(one.value().count, 1000u);
  EXPECT_EQ(one.value().shape, (std::vector<uint64_t>{40, 25}));
  EXPECT_EQ(one.value().data_offset, v1.size() - 4000);
  const std::string v2 = npy_bytes("<i4", "(7,)", std::string(28, '\0'), false, 2);
  auto two = parse(v2, DType::kInt32);
  ASSERT_TRUE(two.is_ok()) << two.status().message();
  EXPECT_EQ(two.value().count, 7u);
  EXPECT_EQ(two.value().data_offset, v2.size() - 28);
  auto scalar = parse(npy_bytes("<f4", "()", std::string(4, '\0')));
  ASSERT_TRUE(scalar.is_ok()) << scalar.status().message();
  EXPECT_EQ(scalar.value().count, 1u);
  // A Fortran-order vector is the same bytes as a C-order one.
  EXPECT_TRUE(parse(npy_bytes("<f4", "(3,)", std::string(12, '\0'), true)).is_ok());
}

struct Crafted {
  std::string name;
  std::string file;  // the whole file
  std::string expect_in_message;
};

std::string padded(const std::string& shape, size_t data_bytes = 4096) {
  return npy_bytes("<f4", shape, std::string(data_bytes, '\x01'));  // non-zero: every element is kept
}

// A format 1.0 file whose header dict is exactly `dict` (no padding, no data).
std::string raw(const std::string& dict) {
  return std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(dict.size()) + '\0' + dict;
}

// (1, 1, ..., 1) with `dims` dimensions.
std::string ones_shape(int dims) {
  std::string s = "(";
  for (int i = 0; i < dims; ++i) s.append("1, ");
  s.push_back(')');
  return s;
}

std::vector<Crafted> crafted_files() {
  return {
      {"negative", padded("(-5,)"), "negative dimension"},
      {"all_ones", padded("(18446744073709551615,)"), "more than any file can hold"},
      {"over_uint64", padded("(18446744073709551616,)"), "out of range"},
      {"bytes_overflow", padded("(4611686018427387905,)"), "more than any file can hold"},
      {"product_overflow", padded("(9223372036854775809, 2)"), "more than 2^64 elements"},
      {"end_offset_overflow", padded("(4611686018427387903,)"), "more than any file can hold"},
      {"leading_comma", padded("(,4-08)"), "non-numeric dimension"},
      {"minus_inside", padded("(4-08)"), "malformed 'shape' (4-08)"},
      {"leading_zero", padded("(08,)"), "leading zero"},
      {"letters", padded("(abc,)"), "non-numeric dimension"},
      {"zero", padded("(4, 0)"), "holds no elements"},
      {"unclosed", padded("(4,"), "non-numeric dimension"},
      {"too_many_dims", padded(ones_shape(65)), "more than 64 dimensions"},
      {"truncated_data", npy_bytes("<f4", "(100,)", std::string(396, '\0')), "is truncated: its shape needs"},
      {"wrong_type", npy_bytes("<f8", "(2,)", std::string(16, '\0')), "'<f4'"},
      {"structured_type", raw("{'descr': [('a', '<f4')], 'fortran_order': False}"),
       "not a plain one"},
      {"repeated_key", raw("{'shape': (1,), 'shape': (1,), 'descr': '<f4', 'x': 1}"),
       "repeated key 'shape'"},
      {"missing_shape", raw("{'descr': '<f4', 'fortran_order': False}\n"),
       "no 'shape'"},
      {"trailing_text", raw("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x"),
       "malformed header"},
      {"header_too_long", std::string("\x93NUMPY\x02\x00\x00\x00\x20\x00", 12), "over the 1048576"},
      {"header_truncated", std::string("\x93NUMPY\x01\x00\xff\x00{'descr'", 18), "truncated inside its header"},
      {"version_9", std::string("\x93NUMPY\x09\x00\x10\x00", 10), "version 9"},
      {"not_npy", "PK\x03\x04 a zip file", "no \\x93NUMPY magic"},
  };
}

void PrintTo(const Crafted& c, std::ostream* os) { *os << c.name; }

class NpyCraftedHeader : public ::testing::TestWithParam<Crafted> {};

TEST_P(NpyCraftedHeader, IsAUsageErrorNamingTheFile) {
  auto r = parse(GetParam().file);
  ASSERT_FALSE(r.is_ok()) << "accepted: count " << r.value().count;
  EXPECT_EQ(r.status().code(), Code::kUsage);
  EXPECT_EQ(r.status().message().rfind(std::string(kName) + ": ", 0), 0u) << r.status().message();
  EXPECT_NE(r.status().message().find(GetParam().expect_in_message), std::string::npos) << r.status().message();
}

INSTANTIATE_TEST_SUITE_P(Cases, NpyCraftedHeader, ::testing::ValuesIn(crafted_files()),
                         [](const auto& info) { return info.param.name; });

TEST(NpyHeader, EveryPrefixOfAGoodFileIsRefusedCleanly) {
  const std::string good = npy_bytes("<f4", "(3, 2)", std::string(24, '\0'));
  for (size_t n = 0; n < good.size(); ++n) {
    auto r = parse(good.substr(0, n));
    EXPECT_FALSE(r.is_ok()) << n;
    EXPECT_EQ(r.status().code(), Code::kUsage) << n;
  }
  EXPECT_TRUE(parse(good).is_ok());
}

// ---- through the binary --------------------------------------------------

std::string npy_folder(const std::string& name) {
  const std::string dir = testing::temp_path(name);
  std::filesystem::create_directories(dir);
  return dir;
}

testing::CliResult run_npy(const std::string& dir) {
  return testing::run_cli({"allreduce", "--workload", "npy", "--input", dir, "--nodes", "2", "-n", "1", "-w", "0"},
                          {}, 20);
}

TEST(NpyCli, CraftedShapesExitTwoNamingTheFile) {
  // Before the checks: (-5,) and (2^64-1,) crashed (139) once a first chunk of
  // 4 MiB had been read, (2^62+1,) aborted (134).
  for (const std::string shape : {"(-5,)", "(18446744073709551615,)", "(4611686018427387905,)"}) {
    const std::string dir = npy_folder("npy_cli_crafted");
    std::ofstream(npy_rank_path(dir, 0), std::ios::binary) << padded(shape, 4 << 20);
    std::ofstream(npy_rank_path(dir, 1), std::ios::binary) << padded("(1024,)");
    auto r = run_npy(dir);
    EXPECT_EQ(r.exit_code, 2) << shape << ": " << r.err;
    EXPECT_NE(r.err.find(npy_rank_path(dir, 0) + ": "), std::string::npos) << r.err;
    std::filesystem::remove_all(dir);
  }
}

TEST(NpyCli, FifoIsRefusedAtOnce) {
  const std::string dir = npy_folder("npy_cli_fifo");
  std::ofstream(npy_rank_path(dir, 0), std::ios::binary) << padded("(1024,)");
  ASSERT_EQ(mkfifo(npy_rank_path(dir, 1).c_str(), 0644), 0);
  auto r = run_npy(dir);  // before: blocked in open() until killed
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(npy_rank_path(dir, 1) + ": is a FIFO"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 10);
}

TEST(NpyCli, FolderIsRefused) {
  const std::string dir = npy_folder("npy_cli_folder");
  std::filesystem::create_directories(npy_rank_path(dir, 0));
  std::ofstream(npy_rank_path(dir, 1), std::ios::binary) << padded("(1024,)");
  auto r = run_npy(dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(npy_rank_path(dir, 0) + ": is a folder"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace omnib
