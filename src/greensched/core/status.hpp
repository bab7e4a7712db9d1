// Errors as values: a Status says ok or carries a message and a code; Result<T> is a value or
// an error. Readers and the cluster return these instead of throwing or aborting, so callers
// decide how to report (file:line for readers, an HTTP error for the extender, a test
// assertion, an exit code for the command line). Both are [[nodiscard]]: an error is handled
// or passed on, never dropped.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace greensched {

// What kind of failure: the command line maps it to an exit code.
enum class ErrorCode {
  kInvalidInput,  // malformed or inconsistent input (the default)
  kNotFound,      // a named thing (file, pod, record) does not exist
  kIo,            // reading or writing failed
  kInternal,      // a broken invariant
};

struct Error {
  std::string message;
  ErrorCode code = ErrorCode::kInvalidInput;
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error)  // NOLINT: implicit
      : error_(std::move(error.message)), code_(error.code), ok_(false) {}
  static Status Ok() { return {}; }

  bool ok() const { return ok_; }
  const std::string& message() const { return error_; }
  ErrorCode code() const { return code_; }
  // The error with its code, to pass on as another Result's error.
  Error error() const {
    assert(!ok());
    return Error{error_, code_};
  }

 private:
  std::string error_;
  ErrorCode code_ = ErrorCode::kInvalidInput;
  bool ok_ = true;
};

template <typename T>
class [[nodiscard]] Result {
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
  ErrorCode code() const {
    assert(!ok());
    return std::get<1>(v_).code;
  }
  Status status() const { return ok() ? Status::Ok() : Status(std::get<1>(v_)); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace greensched
