// Errors raised by the native core. The bindings translate each kind onto the Python
// hierarchy in ciyuan/errors.py, so a C++ failure is always an ordinary Python exception.
#pragma once

#include <stdexcept>
#include <string>

namespace ciyuan {

enum class ErrorKind {
  kInvalidInput,   // bad text or arguments (ciyuan.errors.InvalidInputError)
  kModel,          // an inconsistent model / vocabulary (ciyuan.errors.ModelError)
  kSpecialToken,   // disallowed special-token text in ordinary input (DisallowedSpecialTokenError)
  kUnknownId,      // an id outside the vocabulary (ciyuan.errors.UnknownIdError)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace ciyuan
