#pragma once
// Something computed once per tensor (its content hash, the file it was written to), found again
// by the tensor's identity. The candidates of one minify share their unchanged input tensors, so a
// model's parameters are hashed and written once, not once per query: the cost of a query does
// not grow with the parameters' size. An entry is stale once its tensor was freed (its address may
// be reused) or changed in place (its version counter moved); a stale entry is dropped when seen.

#include <mutex>
#include <optional>
#include <unordered_map>

#include <ATen/core/Tensor.h>

namespace tsrepro {

template <typename T>
class TensorMemo {
 public:
  std::optional<T> find(const at::Tensor& tensor) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = entries_.find(tensor.unsafeGetTensorImpl());
    if (found == entries_.end()) return std::nullopt;
    if (found->second.owner.expired() || found->second.version != tensor._version()) {
      entries_.erase(found);
      return std::nullopt;
    }
    return found->second.value;
  }

  void put(const at::Tensor& tensor, T value) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (entries_.size() >= next_sweep_) sweep();
    entries_.insert_or_assign(tensor.unsafeGetTensorImpl(),
                              Entry{Owner(tensor.getIntrusivePtr()), tensor._version(), std::move(value)});
  }

 private:
  using Owner = c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>;
  struct Entry {
    Owner owner;  // weak: the memo never keeps a tensor alive
    int64_t version;
    T value;
  };

  // Drops the entries of freed tensors; runs when the table doubled since the last sweep.
  void sweep() {
    for (auto it = entries_.begin(); it != entries_.end();) it = it->second.owner.expired() ? entries_.erase(it) : ++it;
    next_sweep_ = std::max<size_t>(64, 2 * entries_.size());
  }

  std::mutex mutex_;
  std::unordered_map<const c10::TensorImpl*, Entry> entries_;
  size_t next_sweep_ = 64;
};

}  // namespace tsrepro
