// Status values returned by library code. Only the CLI turns them into a
// message on stderr and a process exit code (see docs/exit-codes.md).
#pragma once

#include <string>
#include <utility>

namespace omnib {

// Each code maps to one documented process exit code.
enum class Code {
  kOk = 0,
  kInternal = 1,     // a bug or an unexpected system failure
  kUsage = 2,        // bad arguments or input files
  kWrongResult = 3,  // a collective produced wrong elements
  kTimeout = 4,      // a wait ran past --timeout (dead or silent peer)
  kRegression = 5,   // a performance gate failed
  kUnavailable = 6,  // backend/runtime missing, or a peer/transport failed
  // Standard output was closed under us (`omni-bench ... | head`): the job
  // ends quietly, as a command killed by SIGPIPE would (128 + 13).
  kOutputClosed = 141,
};

inline int exit_code(Code c) { return static_cast<int>(c); }

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }
  bool is_ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prefixes context ("rank 2: ") while keeping the code.
  Status with_context(const std::string& prefix) const {
    if (is_ok()) return *this;
    return Status(code_, prefix + message_);
  }

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

inline Status usage_error(std::string m) { return {Code::kUsage, std::move(m)}; }
inline Status internal_error(std::string m) { return {Code::kInternal, std::move(m)}; }
inline Status timeout_error(std::string m) { return {Code::kTimeout, std::move(m)}; }
inline Status unavailable_error(std::string m) { return {Code::kUnavailable, std::move(m)}; }
inline Status output_closed_error(std::string m) { return {Code::kOutputClosed, std::move(m)}; }

// Value-or-status, for functions that produce something.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT
  bool is_ok() const { return status_.is_ok(); }
  const Status& status() const { return status_; }
  T& value() { return value_; }
  const T& value() const { return value_; }
  T&& take() { return std::move(value_); }

 private:
  Status status_;
  T value_{};
};

#define OMNIB_RETURN_IF_ERROR(expr)            \
  do {                                         \
    ::omnib::Status omnib_status_ = (expr);    \
    if (!omnib_status_.is_ok()) return omnib_status_; \
  } while (0)

}  // namespace omnib
