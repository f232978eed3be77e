#include "workloads/checkpoint.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace fdrill {

namespace {

constexpr char kMagic[8] = {'F', 'D', 'C', 'K', 'P', 'T', '0', '1'};
// Layout: magic, then int64 step, nranks, count, digest, then count doubles
// (host byte order: a checkpoint is read back on the machines that wrote it).

std::string Errno() { return std::strerror(errno); }

Status FileError(const std::string& dir, const std::string& what) {
  return Unavailable("--checkpoint-dir " + dir + ": " + what + ": " + Errno());
}

Status WriteAll(int fd, const void* data, size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Unavailable(Errno());
    p += n;
    size -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status FsyncDir(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return FileError(dir, "open directory");
  int rc = fsync(fd);
  close(fd);
  if (rc != 0) return FileError(dir, "fsync directory");
  return Status::Ok();
}

// The fixed-length progress line: rewriting it in place never leaves a
// longer old line's tail behind.
std::string ProgressLine(const Progress& p) {
  return fmt::format("completed {:>20} redone {:>20}\n", p.completed, p.redone);
}

}  // namespace

uint64_t StateDigest(std::span<const double> state) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (std::byte b : std::as_bytes(state)) {
    hash ^= static_cast<uint8_t>(b);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string DigestHex(uint64_t digest) { return fmt::format("{:016x}", digest); }

Status PrepareCheckpointDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Unavailable("--checkpoint-dir " + dir + ": cannot create it: " + ec.message());
  const std::string probe = dir + "/.fdrill-probe";
  int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return FileError(dir, "not writable (creating a file there failed)");
  close(fd);
  unlink(probe.c_str());
  return Status::Ok();
}

Status WriteCheckpoint(const std::string& dir, const Checkpoint& c) {
  const std::string tmp = dir + "/checkpoint.tmp";
  const std::string final_path = dir + "/checkpoint";
  const int64_t header[4] = {c.step, c.nranks, static_cast<int64_t>(c.state.size()),
                             static_cast<int64_t>(StateDigest(c.state))};
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return FileError(dir, "open checkpoint.tmp");
  Status s = WriteAll(fd, kMagic, sizeof(kMagic));
  if (s.ok()) s = WriteAll(fd, header, sizeof(header));
  if (s.ok()) s = WriteAll(fd, c.state.data(), c.state.size() * sizeof(double));
  if (s.ok() && fsync(fd) != 0) s = Unavailable(Errno());
  if (close(fd) != 0 && s.ok()) s = Unavailable(Errno());
  if (!s.ok()) {
    unlink(tmp.c_str());
    return Unavailable("--checkpoint-dir " + dir + ": writing checkpoint.tmp: " + s.message());
  }
  if (rename(tmp.c_str(), final_path.c_str()) != 0)
    return FileError(dir, "rename checkpoint.tmp to checkpoint");
  return FsyncDir(dir);
}

Result<std::optional<Checkpoint>> ReadCheckpoint(const std::string& dir) {
  const std::string path = dir + "/checkpoint";
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    if (errno == ENOENT) return std::optional<Checkpoint>();
    return FileError(dir, "open checkpoint");
  }
  auto bad = [&](const std::string& why) {
    std::fclose(f);
    return Status(InvalidArgument("--checkpoint-dir " + dir + ": checkpoint is damaged (" + why +
                                  "); move it away to start from step 0"));
  };
  char magic[sizeof(kMagic)];
  int64_t header[4];
  if (std::fread(magic, 1, sizeof(magic), f) != sizeof(magic) ||
      std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) {
    return bad("not an fdrill checkpoint");
  }
  if (std::fread(header, sizeof(int64_t), 4, f) != 4) return bad("short header");
  if (header[0] < 0 || header[1] < 1 || header[2] < 0) return bad("bad header");
  Checkpoint c;
  c.step = header[0];
  c.nranks = header[1];
  c.state.resize(static_cast<size_t>(header[2]));
  if (std::fread(c.state.data(), sizeof(double), c.state.size(), f) != c.state.size())
    return bad("short state");
  if (std::fgetc(f) != EOF) return bad("trailing bytes");
  if (StateDigest(c.state) != static_cast<uint64_t>(header[3])) return bad("digest mismatch");
  std::fclose(f);
  return std::optional<Checkpoint>(std::move(c));
}

Result<std::unique_ptr<ProgressFile>> ProgressFile::Open(const std::string& dir) {
  const std::string path = dir + "/progress";
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return FileError(dir, "open progress");
  char text[128] = {};
  ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
  Progress progress;
  if (n > 0 && std::sscanf(text, "completed %" SCNd64 " redone %" SCNd64, &progress.completed,
                           &progress.redone) != 2) {
    close(fd);
    return InvalidArgument("--checkpoint-dir " + dir + ": progress is damaged; move it away");
  }
  return std::unique_ptr<ProgressFile>(new ProgressFile(path, fd, progress));
}

ProgressFile::~ProgressFile() { close(fd_); }

Status ProgressFile::StepCompleted(int64_t step) {
  if (step < progress_.completed) ++progress_.redone;
  progress_.completed = std::max(progress_.completed, step + 1);
  const std::string line = ProgressLine(progress_);
  if (pwrite(fd_, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size())) {
    return Unavailable(path_ + ": write failed: " + Errno());
  }
  return Status::Ok();
}

}  // namespace fdrill
