// fdrill-train-ref: prints the digest fdrill-collective --train reaches
// after N steps on R ranks with -b BYTES, computed without a network
// (train_reference.h). A drill runs it after the job to check the job's
// final digest: equal means nothing was lost or corrupted across restarts.
//   fdrill-train-ref --nranks 4 --steps 120 -b 1M   ->   digest: 60148d6ee57e40bd
#include <cstdio>

#include <CLI/CLI.hpp>

#include "common/core/units.h"
#include "workloads/checkpoint.h"
#include "workloads/train_reference.h"

int main(int argc, char** argv) {
  CLI::App app{"fdrill-train-ref: the fault-free digest of fdrill-collective --train"};
  int nranks = 0;
  int64_t steps = 0;
  std::string size = "1M";
  app.add_option("--nranks", nranks, "ranks of the job")->required()->check(CLI::Range(1, 1 << 20));
  app.add_option("--steps", steps, "steps completed (steps_done)")
      ->required()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  app.add_option("-b,--size", size, "message size as given to fdrill-collective -b")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  auto bytes = fdrill::ParseSizeBytes(size);
  if (!bytes.ok() || *bytes == 0 || *bytes % 8 != 0) {
    std::fprintf(stderr,
                 "fdrill-train-ref: -b %s: a positive multiple of 8 bytes (float64 state)\n",
                 size.c_str());
    return 2;
  }
  std::printf("digest: %s\n",
              fdrill::DigestHex(fdrill::TrainReferenceDigest(nranks, *bytes / 8, steps)).c_str());
  return 0;
}
