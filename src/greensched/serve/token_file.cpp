#include "greensched/serve/token_file.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <sys/stat.h>

#include <cctype>

#include <fmt/format.h>

#include "greensched/core/text_file.hpp"

namespace greensched::serve {
namespace {

bool is_token_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

std::string_view trim_token(std::string_view s) {
  while (!s.empty() && is_token_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_token_space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<TokenFile::Digest> sha256(std::string_view text) {
  TokenFile::Digest digest{};
  unsigned int size = 0;
  if (EVP_Digest(text.data(), text.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1 ||
      size != digest.size()) {
    return std::nullopt;
  }
  return digest;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  const auto da = sha256(a);
  const auto db = sha256(b);
  return da && db && CRYPTO_memcmp(da->data(), db->data(), da->size()) == 0;
}

std::optional<std::string_view> bearer_token(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size() || !is_token_space(authorization[kScheme.size()])) {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) {
      return std::nullopt;
    }
  }
  const std::string_view token = trim_token(authorization.substr(kScheme.size()));
  if (token.empty()) return std::nullopt;
  return token;
}

Result<std::pair<std::string, TokenFile::Stamp>> TokenFile::read_token(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return Error{fmt::format("--auth-token-file {}: cannot read it", path), ErrorCode::kNotFound};
  }
  auto text = read_file(path);
  if (!text.ok()) return Error{fmt::format("--auth-token-file: {}", text.error()), ErrorCode::kIo};
  const std::string_view token = trim_token(text.value());
  if (token.empty()) {
    return Error{fmt::format("--auth-token-file {}: the file holds no token (it is empty)", path)};
  }
  Stamp stamp;
  stamp.device = st.st_dev;
  stamp.inode = st.st_ino;
  stamp.size = st.st_size;
  stamp.mtime_ns = static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
  return std::make_pair(std::string(token), stamp);
}

Result<std::unique_ptr<TokenFile>> TokenFile::open(std::string path,
                                                   std::chrono::milliseconds recheck) {
  auto read = read_token(path);
  if (!read.ok()) return Error{read.error(), read.code()};
  const auto digest = sha256(read.value().first);
  if (!digest) return Error{"cannot compute SHA-256 (libcrypto)", ErrorCode::kInternal};
  std::unique_ptr<TokenFile> file(new TokenFile(std::move(path), recheck));
  file->digest_ = *digest;
  file->stamp_ = read.value().second;
  file->checked_ = std::chrono::steady_clock::now();
  return file;
}

void TokenFile::refresh_locked(std::chrono::steady_clock::time_point now) {
  if (now - checked_ < recheck_) return;
  checked_ = now;
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) return;  // gone for now: keep the token in force
  Stamp seen;
  seen.device = st.st_dev;
  seen.inode = st.st_ino;
  seen.size = st.st_size;
  seen.mtime_ns = static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
  if (seen == stamp_) return;
  auto read = read_token(path_);
  if (!read.ok()) return;  // empty or unreadable mid-rewrite: keep it, look again later
  const auto digest = sha256(read.value().first);
  if (!digest) return;
  digest_ = *digest;
  stamp_ = read.value().second;
}

bool TokenFile::matches(std::string_view presented) {
  const auto got = sha256(presented);
  std::lock_guard lock(mu_);
  refresh_locked(std::chrono::steady_clock::now());
  return got && CRYPTO_memcmp(got->data(), digest_.data(), got->size()) == 0;
}

}  // namespace greensched::serve
