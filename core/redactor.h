// Redactor: a hook that rewrites an event before it is stored or fanned out,
// e.g. to mask personal data. It sees the event after validation and before
// the bus assigns its sequence; it must not change `stream` or `sequence`
// (the bus rejects a redactor that does).
//
// Thread safety: Redact() is called concurrently from publishing threads.
#ifndef KEEL_CORE_REDACTOR_H_
#define KEEL_CORE_REDACTOR_H_

#include "keel/core/event.h"

namespace keel {

class Redactor {
 public:
  virtual ~Redactor() = default;
  virtual void Redact(Event& event) const = 0;
};

}  // namespace keel

#endif  // KEEL_CORE_REDACTOR_H_
