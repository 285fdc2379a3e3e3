#pragma once
// An error raised outside C++: the PyTorch 2 backends' Python compile server
// (backends/pt2_program.h) answers a failed compile or run with the Python exception's type and
// message. The evaluation names the failure by that type ("torch._dynamo.exc.Unsupported"), as a
// verdict's signature names any exception by its type.

#include <stdexcept>
#include <string>
#include <utility>

namespace tsrepro {

class ForeignError : public std::runtime_error {
 public:
  ForeignError(std::string type, const std::string& message) : std::runtime_error(message), type_(std::move(type)) {}
  const std::string& type() const { return type_; }

 private:
  std::string type_;
};

// A PyTorch 2 backend's way in failed, before its compiler ran: torch.export's tracing of the
// module form, or the TorchScript converter. The evaluation gives it the phase `route`.
class RouteFailure : public ForeignError {
 public:
  using ForeignError::ForeignError;
};

}  // namespace tsrepro
