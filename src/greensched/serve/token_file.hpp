// The bearer token a listener's clients must send (`--auth-token-file`): read from a file,
// compared in constant time, and re-read when the file changes, so that a token is rotated by
// replacing the file's content (or the Kubernetes Secret mounted there) without a restart.
//
// The file is looked at (stat) at most once per `recheck` (1 s by default); it is re-read
// when its inode, size or modification time changed. Leading and trailing whitespace (the
// newline of `echo token > file`) is not part of the token. An empty or unreadable file is an
// error at open; later, while the file is empty or unreadable (a rewrite in progress), the
// previous token stays in force and the file is looked at again at the next recheck.
//
// Tokens are compared through their SHA-256 digests with CRYPTO_memcmp (OpenSSL), so neither
// the content nor the length of the token shows in the time a wrong guess takes.
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "greensched/core/status.hpp"

namespace greensched::serve {

class TokenFile {
 public:
  using Digest = std::array<unsigned char, 32>;

  // Reads the token in `path`; an unreadable file, or one holding only whitespace, is an
  // error naming the path.
  static Result<std::unique_ptr<TokenFile>> open(
      std::string path, std::chrono::milliseconds recheck = std::chrono::seconds(1));

  // Whether `presented` is the token (re-reading the file first when it changed).
  bool matches(std::string_view presented);

  const std::string& path() const { return path_; }

 private:
  struct Stamp {
    unsigned long long device = 0, inode = 0;
    long long size = -1, mtime_ns = 0;
    bool operator==(const Stamp&) const = default;
  };
  TokenFile(std::string path, std::chrono::milliseconds recheck)
      : path_(std::move(path)), recheck_(recheck) {}
  // Re-reads the token when the file changed since it was last read.
  void refresh_locked(std::chrono::steady_clock::time_point now);
  // Reads the file's token and stamp; an error when unreadable or empty.
  static Result<std::pair<std::string, Stamp>> read_token(const std::string& path);

  std::string path_;
  std::chrono::milliseconds recheck_;
  std::mutex mu_;
  Digest digest_{};  // of the token in force
  Stamp stamp_;      // of the file it was read from
  std::chrono::steady_clock::time_point checked_;
};

// The SHA-256 digest of `text` (nullopt only if libcrypto fails).
std::optional<TokenFile::Digest> sha256(std::string_view text);

// Whether a == b, in time that depends on neither content nor length.
bool constant_time_equal(std::string_view a, std::string_view b);

// The token of an Authorization header value "Bearer <token>" (the scheme in any case, as
// RFC 9110 allows); nullopt for another scheme or no token.
std::optional<std::string_view> bearer_token(std::string_view authorization);

}  // namespace greensched::serve
