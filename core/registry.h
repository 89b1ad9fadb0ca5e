// Registry<Factory>: named factories, registered at static-init time with a
// macro or at run time by host programs (Envoy-style).
//
// Used for drivers (core/driver_factory.h) and state stores
// (statestore/state_store.h). Names are unique: a second registration of a
// name fails. Looking up an unknown name returns kNotFound listing every
// registered name, so a typo in a config file explains itself.
// ScopedOverride swaps a factory for the lifetime of a test.
//
// Thread safety: all methods lock; factories must outlive the registry entry.
#ifndef KEEL_CORE_REGISTRY_H_
#define KEEL_CORE_REGISTRY_H_

#include <map>
#include <memory>
#include <string>
#include "absl/strings/string_view.h"
#include <type_traits>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "keel/core/mutex.h"
#include "keel/core/errors.h"

namespace keel {

template <typename Factory>
class Registry {
 public:
  // `kind` names what is registered in error messages ("driver", "store").
  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  absl::Status Register(std::shared_ptr<Factory> factory) {
    std::string name(factory->name());
    if (name.empty()) return InvalidArgument(absl::StrCat(kind_, " name must not be empty"));
    MutexLock lock(&mu_);
    if (!factories_.emplace(name, std::move(factory)).second) {
      return MakeError(ErrorKind::kConflict,
                       absl::StrCat(kind_, " '", name, "' is already registered"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::shared_ptr<Factory>> Find(absl::string_view name) const {
    MutexLock lock(&mu_);
    auto it = factories_.find(std::string(name));
    if (it != factories_.end()) return it->second;
    return NotFound(absl::StrCat("unknown ", kind_, " '", name, "'; registered: ",
                                 factories_.empty() ? "(none)" : JoinNamesLocked()));
  }

  std::vector<std::string> RegisteredNames() const {
    MutexLock lock(&mu_);
    std::vector<std::string> names;
    for (const auto& [name, factory] : factories_) names.push_back(name);
    return names;  // std::map keeps them sorted.
  }

  // Replaces (or adds) `factory` under its name until destroyed, then
  // restores what was there before.
  class ScopedOverride {
   public:
    ScopedOverride(Registry& registry, std::shared_ptr<Factory> factory)
        : registry_(registry), name_(factory->name()) {
      MutexLock lock(&registry_.mu_);
      auto it = registry_.factories_.find(name_);
      if (it != registry_.factories_.end()) previous_ = it->second;
      registry_.factories_[name_] = std::move(factory);
    }
    ~ScopedOverride() {
      MutexLock lock(&registry_.mu_);
      if (previous_) {
        registry_.factories_[name_] = std::move(previous_);
      } else {
        registry_.factories_.erase(name_);
      }
    }
    ScopedOverride(const ScopedOverride&) = delete;
    ScopedOverride& operator=(const ScopedOverride&) = delete;

   private:
    Registry& registry_;
    std::string name_;
    std::shared_ptr<Factory> previous_;
  };

 private:
  std::string JoinNamesLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::vector<absl::string_view> names;
    for (const auto& entry : factories_) names.push_back(entry.first);
    return absl::StrJoin(names, ", ");
  }

  const std::string kind_;
  mutable Mutex mu_;
  std::map<std::string, std::shared_ptr<Factory>> factories_ ABSL_GUARDED_BY(mu_);
};

// Aborts the process with `status`: a broken static registration (such as a
// duplicate name) is a programming error that must not go unnoticed.
[[noreturn]] void FailRegistration(const absl::Status& status);

// For static registration macros: registers or aborts; returns true so the
// result can initialise a namespace-scope constant.
template <typename Factory>
bool RegisterOrDie(Registry<Factory>& registry,
                   std::type_identity_t<std::shared_ptr<Factory>> factory) {
  absl::Status status = registry.Register(std::move(factory));
  if (!status.ok()) FailRegistration(status);
  return true;
}

}  // namespace keel

#endif  // KEEL_CORE_REGISTRY_H_
