#include "agents/request_gate.h"

#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/wire/protocol.h"

namespace fdrill {

std::string NormalSerial(std::string_view hex) {
  std::string out;
  for (char c : hex) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == ':') continue;
    if (out.empty() && c == '0') continue;
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out.empty() ? "0" : out;
}

Status RequestGate::Refresh() {
  if (revoked_file_.empty()) return Status::Ok();
  struct stat st {};
  if (stat(revoked_file_.c_str(), &st) != 0) {
    if (errno != ENOENT)
      return PermissionDenied("cannot read the revocation list " + revoked_file_ + ": " +
                              std::strerror(errno) + "; refusing every certificate until it can");
    revoked_.clear();
    size_ = -1;
    return Status::Ok();
  }
  if (!S_ISREG(st.st_mode))
    return PermissionDenied("the revocation list " + revoked_file_ +
                            " is not a regular file; refusing every certificate until it is");
  if (st.st_mtim.tv_sec == mtime_.tv_sec && st.st_mtim.tv_nsec == mtime_.tv_nsec &&
      st.st_size == size_)
    return Status::Ok();
  std::ifstream in(revoked_file_);
  if (!in)
    return PermissionDenied("cannot read the revocation list " + revoked_file_ + ": " +
                            std::strerror(errno) + "; refusing every certificate until it can");
  std::set<std::string> serials;
  for (std::string line; std::getline(in, line);) {
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    serials.insert(NormalSerial(line));
  }
  revoked_ = std::move(serials);
  mtime_ = st.st_mtim;
  size_ = st.st_size;
  return Status::Ok();
}

Status RequestGate::Admit(const Caller& caller, std::string_view type) {
  if (!caller.tls) return Status::Ok();
  if (Status s = Refresh(); !s.ok()) return s;
  if (revoked_.count(NormalSerial(caller.serial))) {
    return PermissionDenied("certificate " + caller.subject + " (serial " + caller.serial +
                            ") is revoked (" + revoked_file_ + ")");
  }
  if (type == proto::kHello) return Status::Ok();
  if (caller.role == "controller") return Status::Ok();
  const std::string what = "\"" + std::string(type) + "\"";
  if (caller.role == "observer") {
    if (type == proto::kInventory) return Status::Ok();
    return PermissionDenied(what + " refused: " + caller.subject +
                            " is an observer certificate (hello and inventory only); drills need "
                            "a controller certificate (`fdrill certs issue NAME --role "
                            "controller`)");
  }
  if (caller.role.empty()) {
    return PermissionDenied(what + " refused: " + caller.subject +
                            " carries no role (made before certificates had roles); issue a new "
                            "one: `fdrill certs issue NAME --role controller`");
  }
  return PermissionDenied(what + " refused: " + caller.subject + " is a " + caller.role +
                          " certificate; only a controller certificate may make requests of "
                          "agents (`fdrill certs issue NAME --role controller`)");
}

}  // namespace fdrill
