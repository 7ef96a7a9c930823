// A reference to a callable that does not own it (libmccl_mpi's routed calls).
#pragma once

#include <type_traits>

namespace mccl {

// A reference to a callable, two words, for the lambdas every routed call makes (host
// buffers included), where a std::function of their captures would allocate. It must not
// outlive the callable: pass a lambda straight as an argument, or name it first
// (`const auto staged = [&]...`) and pass the name.
template <class Sig>
class FnRef;
template <class R, class... A>
class FnRef<R(A...)> {
 public:
  template <class F, class = std::enable_if_t<!std::is_same<std::decay_t<F>, FnRef>::value>>
  FnRef(const F& f)  // NOLINT(google-explicit-constructor): lambdas convert at the call
      : fn_(&f), call_([](const void* fn, A... a) -> R { return (*static_cast<const F*>(fn))(a...); }) {}
  R operator()(A... a) const { return call_(fn_, a...); }

 private:
  const void* fn_;
  R (*call_)(const void*, A...);
};

}  // namespace mccl
