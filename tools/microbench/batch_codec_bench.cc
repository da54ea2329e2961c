// The omni engine's per-batch CPU work on a top-k-like tensor (non-zero
// elements scattered uniformly), by block size and encoding: the worker's
// scan with per-block non-zero counts (and the one that also takes sparse
// blocks' elements), the packing of the sparse encodings (from the tensor,
// or from the taken elements), and the receive side's decode and store into the output. Bytes per second
// count the tensor's bytes, so rows of one benchmark compare directly.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>

#include "engine/omni/batch_encoding.h"
#include "engine/omni/block_batch.h"
#include "engine/omni/host_block_io.h"
#include "tools/microbench/bench_inputs.h"

namespace omnib::bench {
namespace {

constexpr size_t kElements = size_t{4} << 20;  // 16 MiB of fp32, the top-k size
constexpr uint64_t kBatchBlocks = 4096;        // blocks per batch, as a 256 KiB frame of dense blocks

// Each element is 1.0f with probability `density`, else zero.
std::vector<float> make_scattered(size_t count, double density, uint64_t seed = 1) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution nonzero(density);
  std::vector<float> t(count, 0.0f);
  for (float& v : t)
    if (nonzero(rng)) v = 1.0f;
  return t;
}

struct Scanned {
  std::vector<uint64_t> blocks;
  std::vector<uint32_t> nonzeros;
};

// The non-zeros the scan counted in blocks [at, at + n).
uint64_t nonzeros_in(const Scanned& s, size_t at, size_t n) {
  uint64_t sum = 0;
  for (size_t k = at; k < at + n; ++k) sum += s.nonzeros[k];
  return sum;
}

Scanned scan(WorkerBlockIo& io, const BlockLayout& layout) {
  Scanned s;
  (void)io.find(0, layout.num_blocks(), false, s.blocks, &s.nonzeros);
  return s;
}

struct Fixture {
  BlockLayout layout;
  ShardMap map;
  std::vector<float> in;
  std::vector<float> out;
  std::unique_ptr<WorkerBlockIo> io;

  Fixture(size_t block_size, double density)
      : layout(kElements, block_size),
        map(layout.num_blocks(), 1, ShardLayout::kStriped, ShardMap::default_stripe(block_size * sizeof(float), kElements / block_size, 1)),
        in(make_scattered(kElements, density)),
        out(kElements) {
    io = std::move(HostBlockIo::create(1).value());
    (void)io->begin({in.data(), kElements, DType::kFloat32}, {out.data(), kElements, DType::kFloat32}, layout, map);
  }
};

// Finding the non-zero blocks and counting each one's non-zero elements.
void BM_ScanWithCounts(benchmark::State& state) {
  Fixture f(static_cast<size_t>(state.range(0)), density_of(state.range(1)));
  Scanned s;
  for (auto _ : state) {
    s = scan(*f.io, f.layout);
    benchmark::DoNotOptimize(s.blocks.data());
  }
  state.counters["blocks"] = static_cast<double>(s.blocks.size());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kElements * sizeof(float)));
}

// The batches of the whole tensor, each in `encoding` (blocks: only the
// index array and iovecs, sent from the tensor as they are).
struct Encoded {
  std::vector<std::vector<uint8_t>> frames;  // header | indices (unless offsets) | encoded values
  uint64_t bytes = 0;
};

Encoded encode_all(Fixture& f, const Scanned& s, BlockEncoding encoding) {
  Encoded e;
  std::vector<iovec> iov;
  UninitBytes packed;
  for (size_t at = 0; at < s.blocks.size(); at += kBatchBlocks) {
    const size_t n = std::min<size_t>(kBatchBlocks, s.blocks.size() - at);
    const std::span<const uint64_t> blocks(s.blocks.data() + at, n);
    iov.clear();
    f.io->value_iovecs(blocks, iov);
    const BatchHeader header{static_cast<uint32_t>(n), static_cast<uint32_t>(encoding),
                             at + n < s.blocks.size() ? s.blocks[at + n] : kEndOfStream};
    std::vector<iovec> frame;
    batch_prefix_iovecs(header, blocks, frame);
    if (encoding == BlockEncoding::kBlocks) {
      frame.insert(frame.end(), iov.begin(), iov.end());
    } else {
      (void)pack_sparse(encoding, blocks, f.layout, sizeof(float), nonzeros_in(s, at, n), iov, packed);
      frame.push_back({packed.data(), packed.size()});
    }
    std::vector<uint8_t> bytes;
    for (const iovec& v : frame)
      bytes.insert(bytes.end(), static_cast<uint8_t*>(v.iov_base), static_cast<uint8_t*>(v.iov_base) + v.iov_len);
    e.bytes += bytes.size();
    e.frames.push_back(std::move(bytes));
  }
  return e;
}

// Building the sparse encodings' payloads from the scanned blocks: from the
// tensor (taken:0), or from the elements the scan took (taken:1; a batch
// holding an untaken block is packed from the tensor, as the engine does).
void BM_PackSparse(benchmark::State& state) {
  Fixture f(static_cast<size_t>(state.range(0)), density_of(state.range(1)));
  const auto encoding = static_cast<BlockEncoding>(state.range(2));
  const bool from_taken = state.range(3) != 0;
  Scanned s;
  FoundElements taken;
  (void)f.io->find_taking(0, f.layout.num_blocks(), s.blocks, s.nonzeros, taken);
  std::vector<iovec> iov;
  UninitBytes packed;
  uint64_t bytes = 0;
  for (auto _ : state) {
    bytes = 0;
    for (size_t at = 0; at < s.blocks.size(); at += kBatchBlocks) {
      const size_t n = std::min<size_t>(kBatchBlocks, s.blocks.size() - at);
      const std::span<const uint64_t> blocks(s.blocks.data() + at, n);
      const auto firsts = taken.first.begin() + static_cast<std::ptrdiff_t>(at);
      const auto firsts_end = firsts + static_cast<std::ptrdiff_t>(n);
      if (from_taken && std::find(firsts, firsts_end, FoundElements::kNotTaken) == firsts_end) {
        (void)pack_sparse_taken(encoding, blocks, std::span<const uint32_t>(s.nonzeros.data() + at, n), f.layout,
                                sizeof(float), taken.positions.data() + *firsts,
                                taken.values.data() + *firsts * sizeof(float), packed);
      } else if (from_taken) {
        iov.clear();
        f.io->value_iovecs(blocks, iov);
        const TakenBlocks held{std::span<const uint64_t>(&*firsts, n), std::span<const uint32_t>(s.nonzeros.data() + at, n),
                               taken.positions.data(), taken.values.data()};
        (void)pack_sparse_partly_taken(encoding, blocks, f.layout, sizeof(float), nonzeros_in(s, at, n), held, iov,
                                       packed);
      } else {
        iov.clear();
        f.io->value_iovecs(blocks, iov);
        (void)pack_sparse(encoding, blocks, f.layout, sizeof(float), nonzeros_in(s, at, n), iov, packed);
      }
      bytes += packed.size();
      benchmark::DoNotOptimize(packed.data());
    }
  }
  state.counters["wire_bytes"] = static_cast<double>(bytes);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kElements * sizeof(float)));
}

// The scan that also takes the non-zero elements of sparse blocks while
// they are in cache (what the engine runs when batches may go sparse).
void BM_ScanTakingElements(benchmark::State& state) {
  Fixture f(static_cast<size_t>(state.range(0)), density_of(state.range(1)));
  Scanned s;
  FoundElements taken;
  for (auto _ : state) {
    s.blocks.clear();
    s.nonzeros.clear();
    taken.clear();
    (void)f.io->find_taking(0, f.layout.num_blocks(), s.blocks, s.nonzeros, taken);
    benchmark::DoNotOptimize(taken.values.data());
  }
  state.counters["blocks"] = static_cast<double>(s.blocks.size());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kElements * sizeof(float)));
}

// The receive side: decoding every batch and storing it into the output
// (zeros written for the blocks no batch names).
void BM_DecodeAndStore(benchmark::State& state) {
  Fixture f(static_cast<size_t>(state.range(0)), density_of(state.range(1)));
  const auto encoding = static_cast<BlockEncoding>(state.range(2));
  const Encoded e = encode_all(f, scan(*f.io, f.layout), encoding);
  BatchView view;
  for (auto _ : state) {
    Status st = f.io->begin_receive();
    for (const auto& frame : e.frames) {
      if (st.is_ok()) st = decode_batch(frame, f.layout, sizeof(float), f.map, 0, view);
      if (st.is_ok()) st = f.io->store(0, view);
    }
    if (st.is_ok()) st = f.io->finish_receive(0);
    if (!st.is_ok()) {
      state.SkipWithError(st.message().c_str());
      break;
    }
    benchmark::DoNotOptimize(f.out.data());
    benchmark::ClobberMemory();
  }
  state.counters["wire_bytes"] = static_cast<double>(e.bytes);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(kElements * sizeof(float)));
}

// The scans by block size and density; the packs by encoding and source too.
void scan_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"block", "permille"})->ArgsProduct({{1, 16, 256}, {1, 10, 50}})->Unit(benchmark::kMicrosecond);
}
void pack_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"block", "permille", "encoding", "taken"})
      ->ArgsProduct({{16, 256},
                     {1, 10, 50},
                     {int64_t(BlockEncoding::kBitmap), int64_t(BlockEncoding::kCoo), int64_t(BlockEncoding::kCoo16)},
                     {0, 1}})
      ->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_ScanWithCounts)->Apply(scan_args);
BENCHMARK(BM_ScanTakingElements)->Apply(scan_args);
BENCHMARK(BM_PackSparse)->Apply(pack_args);

BENCHMARK(BM_DecodeAndStore)
    ->ArgNames({"block", "permille", "encoding"})
    ->ArgsProduct({{1, 16, 256},
                   {1, 10, 50},
                   {int64_t(BlockEncoding::kBlocks), int64_t(BlockEncoding::kBitmap), int64_t(BlockEncoding::kCoo),
                    int64_t(BlockEncoding::kCoo16)}})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace omnib::bench
