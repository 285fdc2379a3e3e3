#pragma once
// Errors a user can fix (bad file, bad flag). The CLI prints what() as one line and exits 2.
// Messages always start with the file or flag at fault: "inputs.pt: expected 3 inputs, got 2".

#include <stdexcept>
#include <string>

namespace tsrepro {

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace tsrepro
