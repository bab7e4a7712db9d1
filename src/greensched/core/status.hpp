// Errors as values: a Status says ok or carries a message; Result<T> is a value or an error.
// Readers and the cluster return these instead of throwing or aborting, so callers decide how
// to report (file:line for readers, an HTTP error for the extender, a test assertion).
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace greensched {

struct Error {
  std::string message;
};

class Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error.message)), ok_(false) {}  // NOLINT: implicit
  static Status Ok() { return {}; }

  bool ok() const { return ok_; }
  const std::string& message() const { return error_; }

 private:
  std::string error_;
  bool ok_ = true;
};

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit
  Result(Error error) : v_(std::move(error)) {}  // NOLINT: implicit

  bool ok() const { return v_.index() == 0; }
  T& value() {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& value() const {
    assert(ok());
    return std::get<0>(v_);
  }
  const std::string& error() const {
    assert(!ok());
    return std::get<1>(v_).message;
  }
  Status status() const { return ok() ? Status::Ok() : Status(Error{error()}); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace greensched
