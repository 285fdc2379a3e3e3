#include "runner/formats/sound_values.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <ATen/core/Dict.h>
#include <ATen/core/List.h>
#include <ATen/core/Tensor.h>

#include "tsrepro/error.h"
#include "tsrepro/limits.h"

namespace tsrepro {
namespace {

std::string joined(c10::IntArrayRef values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

// The tensor's last element lies within its storage: offset + sum((size - 1) * stride) is
// computed with overflow checks (strides of 2^62 wrap around otherwise).
void check_tensor_within_storage(const at::Tensor& t, const std::string& origin) {
  if (!t.defined() || !t.has_storage() || t.is_sparse() || t.numel() == 0) return;
  auto refuse = [&](const std::string& why) {
    throw UserError(origin + ": a tensor of sizes " + joined(t.sizes()) + ", strides " + joined(t.strides()) +
                    " and storage offset " + std::to_string(t.storage_offset()) + " " + why);
  };
  int64_t last = t.storage_offset();
  if (last < 0) refuse("starts before its storage");
  for (size_t d = 0; d < t.sizes().size(); ++d) {
    int64_t reach = 0;
    if (t.strides()[d] < 0) refuse("has a negative stride");
    if (__builtin_mul_overflow(t.sizes()[d] - 1, t.strides()[d], &reach) || __builtin_add_overflow(last, reach, &last))
      refuse("reaches past any storage (the arithmetic overflows)");
  }
  int64_t end_bytes = 0;
  if (__builtin_add_overflow(last, 1, &last) ||
      __builtin_mul_overflow(last, static_cast<int64_t>(t.element_size()), &end_bytes))
    refuse("reaches past any storage (the arithmetic overflows)");
  if (static_cast<uint64_t>(end_bytes) > t.storage().nbytes())
    refuse("reaches byte " + std::to_string(end_bytes) + " of a storage of " + std::to_string(t.storage().nbytes()) +
           " bytes");
}

// The values a container holds, in order; empty for anything else.
std::vector<c10::IValue> children_of(const c10::IValue& v) {
  std::vector<c10::IValue> out;
  if (v.isTuple()) {
    for (const c10::IValue& e : v.toTupleRef().elements()) out.push_back(e);
  } else if (v.isList()) {
    for (const c10::IValue& e : v.toListRef()) out.push_back(e);
  } else if (v.isGenericDict()) {
    for (const auto& entry : v.toGenericDict()) {
      out.push_back(entry.key());
      out.push_back(entry.value());
    }
  } else if (v.isObject()) {
    for (const c10::IValue& slot : v.toObjectRef().slots()) out.push_back(slot);
  }
  return out;
}

bool is_container(const c10::IValue& v) { return v.isTuple() || v.isList() || v.isGenericDict() || v.isObject(); }

}  // namespace

void check_sound_value(const c10::IValue& value, const std::string& origin,
                       const std::function<void(const c10::Storage&)>& check_storage) {
  // Depth-first with an explicit stack, each container once (values are DAGs: a tensor or a
  // list may be reached from two places). The stack is the path from the root, so its height
  // is the nesting depth, and a container met again while on it holds itself.
  struct Frame {
    const void* identity;
    std::vector<c10::IValue> children;
    size_t next = 0;
  };
  std::vector<Frame> path;
  std::unordered_set<const void*> on_path, finished;
  std::unordered_set<const c10::StorageImpl*> storages;
  auto enter = [&](const c10::IValue& v) {
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      check_tensor_within_storage(t, origin);
      if (t.defined() && t.has_storage() && storages.insert(t.storage().unsafeGetStorageImpl()).second && check_storage)
        check_storage(t.storage());
      return;
    }
    if (!is_container(v)) return;
    const void* identity = v.internalToPointer();
    if (on_path.count(identity))
      throw UserError(origin + ": a " + v.tagKind() + " that holds itself (tsrepro reads no cyclic values)");
    if (finished.count(identity)) return;
    if (path.size() >= limits::kMaxNestingDepth)
      throw UserError(origin + ": containers nested deeper than tsrepro's limit of " +
                      std::to_string(limits::kMaxNestingDepth));
    on_path.insert(identity);
    path.push_back({identity, children_of(v)});
  };
  enter(value);
  while (!path.empty()) {
    Frame& top = path.back();
    if (top.next < top.children.size()) {
      const c10::IValue child = top.children[top.next++];
      enter(child);
      continue;
    }
    on_path.erase(top.identity);
    finished.insert(top.identity);
    path.pop_back();
  }
}

void check_sound_value_or_leak(c10::IValue& value, const std::string& origin,
                               const std::function<void(const c10::Storage&)>& check_storage) {
  try {
    check_sound_value(value, origin, check_storage);
  } catch (...) {
    new c10::IValue(std::move(value));  // deliberately never freed: see the header
    throw;
  }
}

}  // namespace tsrepro
