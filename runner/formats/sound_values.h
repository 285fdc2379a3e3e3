#pragma once
// Checks a value read from a file (an inputs.pt, a module's state) before anything walks it:
// libtorch builds whatever a pickle describes, and every later walk over values (types,
// specs, printing, even freeing) recurses once per level and reads tensors through their
// sizes and strides without asking their storage.

#include <functional>
#include <string>

#include <ATen/core/ivalue.h>

namespace tsrepro {

// Throws UserError("ORIGIN: ...") for containers nested past limits::kMaxNestingDepth, a
// container that holds itself, or a tensor whose sizes, strides and offset reach past its
// storage (or overflow doing so). `check_storage`, when given, is called once per distinct
// storage and may throw for its own reasons. The walk itself recurses nowhere.
//
// A value refused for its depth must not be freed either (its destructor recurses as deep):
// the caller leaks it, see leak_too_deep().
void check_sound_value(const c10::IValue& value, const std::string& origin,
                       const std::function<void(const c10::Storage&)>& check_storage = {});

// Runs check_sound_value; when it throws, `value` is moved to the heap and never freed (a
// structure nested a million deep overflows the stack being freed), then the error goes on.
void check_sound_value_or_leak(c10::IValue& value, const std::string& origin,
                               const std::function<void(const c10::Storage&)>& check_storage = {});

}  // namespace tsrepro
