/* CUDA's execution model on the CPU: the header `%%fuse -b cupy --emulate` compiles the renderer's
 * CUDA source against, unchanged, with the host C++ compiler (see cuda_emulate.py).
 *
 * What it provides, and how:
 *  - `__global__`, `__device__`, `__forceinline__`: plain C++ functions.
 *  - `threadIdx`, `blockIdx`, `blockDim`, `gridDim`: globals the scheduler sets before it runs a
 *    thread. Blocks run one after another; within a block, each CUDA thread is a fiber of its own
 *    (ucontext for its stack, _setjmp/_longjmp to switch: glibc's swapcontext makes a system call
 *    per switch, 20x slower here).
 *  - `__syncthreads()`: a real barrier. A thread that reaches it parks; when every thread of the
 *    block has either parked or returned, all of them must wait at the same barrier, and then all
 *    resume. If some returned while others wait, a GPU would hang: the launch stops with an error
 *    that says which barrier (source line) and how many threads never reached it. Between two
 *    barriers the threads of even blocks run in ascending order, of odd blocks in descending order
 *    (a race in shared memory then gives a wrong answer in one of them).
 *  - `__shared__`: a function-local `static`, one copy per kernel function, which is one per block
 *    because blocks run one at a time (uninitialized at block start, as on a GPU, in spirit).
 *  - the math functions: <cmath>, with CUDA's float overloads (`floor(float)` is `floorf`); the
 *    intrinsics the renderer uses (`__longlong_as_double`, `__int_as_float`, and their inverses).
 *  - a watchdog: a launch that runs past its time limit, or an interrupt (SIGINT: Jupyter's
 *    interrupt button) is stopped with a code the caller turns into an error; never a hung notebook.
 *
 * A kernel without `__syncthreads()` runs its threads as plain calls, without fibers (the caller
 * says which, from the source): the same execution, minus the cost of switching.
 *
 * `JFEMU_ENTRY(name)` after the kernel source exports `jfemu_launch_<name>` (run a grid) and
 * `jfemu_signature_<name>` (the parameter types as typeid names, so the caller can check the
 * argument list it built against the kernel's own declaration).
 */
#pragma once

#include <math.h>
#include <cmath>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <typeinfo>
#include <ucontext.h>
#include <utility>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __syncthreads() jfemu::barrier(__LINE__)

struct uint3 { unsigned int x, y, z; };
struct dim3 { unsigned int x, y, z; };

static uint3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;

__device__ __forceinline__ double __longlong_as_double(long long x) { double d; memcpy(&d, &x, 8); return d; }
__device__ __forceinline__ long long __double_as_longlong(double x) { long long i; memcpy(&i, &x, 8); return i; }
__device__ __forceinline__ float __int_as_float(int x) { float f; memcpy(&f, &x, 4); return f; }
__device__ __forceinline__ int __float_as_int(float x) { int i; memcpy(&i, &x, 4); return i; }

namespace jfemu {

enum Status { OK = 0, DEADLOCK = 1, TIMEOUT = 2, INTERRUPTED = 3, BAD_LAUNCH = 4 };
enum State { RUNNABLE, AT_BARRIER, EXITED };
const size_t STACK = 64 * 1024;  // per CUDA thread; kernels are shallow (no recursion, small frames)
const int MAX_BLOCK = 1024;
const int WATCHDOG_SIGNAL_OFFSET = 7;  // SIGRTMIN + 7: a real-time signal nothing else here uses

struct Fiber {
  jmp_buf ctx;
  State state;
  int line;  // the __syncthreads() it waits at
};

static Fiber fibers[MAX_BLOCK];
static int current;  // the thread running now (threadIdx.x), and the scheduler's loop index
static int fibered;  // 0: a kernel without barriers, its threads are plain calls
static jmp_buf scheduler;
static void (*body)(void*);
static void* closure;
static sigjmp_buf escape;  // where an error, the watchdog or an interrupt leaves the launch
static volatile sig_atomic_t armed, interrupted;
static pthread_t launcher;
static char* message;
static int message_len;
static char* stacks;  // the fibers' stacks, mapped for one launch
static size_t stacks_bytes;

[[noreturn]] static void fail(Status status, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, message_len, fmt, ap);
  va_end(ap);
  armed = 0;
  siglongjmp(escape, status);
}

// -- the barrier and the scheduler ---------------------------------------------------------

__attribute__((noinline)) static void barrier(int line) {
  if (!fibered)
    fail(BAD_LAUNCH, "__syncthreads() (line %d) in a kernel launched without fibers", line);
  Fiber* me = &fibers[current];
  me->state = AT_BARRIER;
  me->line = line;
  if (!_setjmp(me->ctx)) _longjmp(scheduler, 1);
  asm volatile("" ::: "memory");  // other threads wrote shared memory while this one was parked
}

static void fiber_main() {  // each fiber runs thread `me` of every block, parking in between
  const int me = current;
  for (;;) {
    if (!_setjmp(fibers[me].ctx)) _longjmp(scheduler, 1);
    body(closure);
    fibers[me].state = EXITED;
  }
}

static void run_block(int nthreads) {
  for (int i = 0; i < nthreads; i++) fibers[i].state = RUNNABLE;
  // Threads run one at a time between barriers, so a race (a read of shared memory another thread
  // writes before the same barrier) gives an order's answer, not a GPU's anything: even blocks run
  // their threads in ascending order, odd blocks in descending order, so that either way round shows.
  const bool down = blockIdx.x & 1;
  for (;;) {
    // run every runnable thread until it parks at a barrier or returns
    for (volatile int k = 0; k < nthreads; k++) {
      current = down ? nthreads - 1 - k : k;
      if (fibers[current].state != RUNNABLE) continue;
      threadIdx.x = (unsigned int)current;
      if (!_setjmp(scheduler)) _longjmp(fibers[current].ctx, 1);
      asm volatile("" ::: "memory");
    }
    int waiting = 0, line = -1, other = -1;
    for (int i = 0; i < nthreads; i++) {
      if (fibers[i].state != AT_BARRIER) continue;
      waiting++;
      if (line < 0) line = fibers[i].line;
      else if (fibers[i].line != line) other = fibers[i].line;
    }
    if (!waiting) return;
    if (waiting < nthreads)
      fail(DEADLOCK, "block %u: %d of its %d threads wait at __syncthreads() (line %d), which the other %d "
           "returned without reaching: on a GPU this kernel hangs", blockIdx.x, waiting, nthreads, line,
           nthreads - waiting);
    if (other >= 0)
      fail(DEADLOCK, "block %u: its threads wait at different __syncthreads() (lines %d and %d): on a GPU this "
           "kernel hangs or races", blockIdx.x, line, other);
    for (int i = 0; i < nthreads; i++) fibers[i].state = RUNNABLE;
  }
}

// -- the watchdog: a time limit and interrupts ------------------------------------------------

static void on_signal(int sig) {
  if (!pthread_equal(pthread_self(), launcher)) {  // SIGINT delivered to another thread: pass it on
    if (sig == SIGINT) pthread_kill(launcher, SIGINT);
    return;
  }
  if (!armed) {  // the launch is finishing: an interrupt is reported once it has
    if (sig == SIGINT) interrupted = 1;
    return;
  }
  armed = 0;
  siglongjmp(escape, sig == SIGINT ? INTERRUPTED : TIMEOUT);
}

static pthread_mutex_t watch_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watch_cv = PTHREAD_COND_INITIALIZER;
static int watch_done;
static struct timespec watch_deadline;

static void* watchdog(void*) {
  pthread_mutex_lock(&watch_mu);
  while (!watch_done) {
    if (pthread_cond_timedwait(&watch_cv, &watch_mu, &watch_deadline) == ETIMEDOUT) {
      if (!watch_done) pthread_kill(launcher, SIGRTMIN + WATCHDOG_SIGNAL_OFFSET);
      break;
    }
  }
  pthread_mutex_unlock(&watch_mu);
  return nullptr;
}

// -- a launch -------------------------------------------------------------------------------

static void run_grid(long long grid, int block) {
  if (!fibered) {
    for (long long b = 0; b < grid; b++) {
      blockIdx.x = (unsigned int)b;
      for (int t = 0; t < block; t++) {
        threadIdx.x = (unsigned int)t;
        body(closure);
      }
    }
    return;
  }
  // one stack per thread of a block, each above a guard page (an overflow faults, never corrupts)
  const size_t page = 4096, each = STACK + page;
  void* mapped = mmap(nullptr, each * block, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) fail(BAD_LAUNCH, "no memory for %d fiber stacks", block);
  stacks = (char*)mapped;
  stacks_bytes = each * block;
  ucontext_t proto, start;
  getcontext(&proto);
  for (current = 0; current < block; current++) {
    char* base = stacks + each * current;
    mprotect(base, page, PROT_NONE);
    start = proto;
    start.uc_stack.ss_sp = base + page;
    start.uc_stack.ss_size = STACK;
    start.uc_link = nullptr;
    makecontext(&start, fiber_main, 0);
    if (!_setjmp(scheduler)) setcontext(&start);  // the fiber parks at once and jumps back
  }
  for (long long b = 0; b < grid; b++) {
    blockIdx.x = (unsigned int)b;
    run_block(block);
  }
}

static int launch_grid(void (*run)(void*), void* args, long long grid, int block, int use_fibers,
                       double timeout, char* msg, int msg_len) {
  message = msg;
  message_len = msg_len;
  if (msg_len > 0) msg[0] = 0;
  if (block < 1 || block > MAX_BLOCK || grid < 1 || grid > 0x7fffffffLL) {
    snprintf(msg, msg_len, "invalid launch: %lld blocks of %d threads", grid, block);
    return BAD_LAUNCH;
  }
  body = run;
  closure = args;
  fibered = use_fibers;
  gridDim = {(unsigned int)grid, 1, 1};
  blockDim = {(unsigned int)block, 1, 1};
  blockIdx = threadIdx = {0, 0, 0};
  launcher = pthread_self();
  interrupted = 0;

  struct sigaction ours, old_int;
  memset(&ours, 0, sizeof ours);
  ours.sa_handler = on_signal;
  sigemptyset(&ours.sa_mask);
  sigaction(SIGINT, &ours, &old_int);
  // never restored: a late watchdog signal must find a handler (it then does nothing)
  sigaction(SIGRTMIN + WATCHDOG_SIGNAL_OFFSET, &ours, nullptr);

  pthread_t dog;
  bool watching = timeout > 0;
  if (watching) {
    clock_gettime(CLOCK_REALTIME, &watch_deadline);
    double whole = floor(timeout);
    watch_deadline.tv_sec += (time_t)whole;
    watch_deadline.tv_nsec += (long)((timeout - whole) * 1e9);
    if (watch_deadline.tv_nsec >= 1000000000L) { watch_deadline.tv_sec++; watch_deadline.tv_nsec -= 1000000000L; }
    watch_done = 0;
    sigset_t all, mine;  // the watchdog thread takes no signals: they are for the launching thread
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &mine);
    watching = pthread_create(&dog, nullptr, watchdog, nullptr) == 0;
    pthread_sigmask(SIG_SETMASK, &mine, nullptr);
  }

  stacks = nullptr;
  int status = sigsetjmp(escape, 1);
  if (status == 0) {
    armed = 1;
    run_grid(grid, block);
    armed = 0;
  }
  if (stacks) munmap(stacks, stacks_bytes);  // also after an error left threads parked on them
  if (watching) {
    pthread_mutex_lock(&watch_mu);
    watch_done = 1;
    pthread_cond_signal(&watch_cv);
    pthread_mutex_unlock(&watch_mu);
    pthread_join(dog, nullptr);
  }
  sigaction(SIGINT, &old_int, nullptr);
  if (status == OK && interrupted) status = INTERRUPTED;
  return status;
}

// -- the argument list: void* per parameter, each pointing at the value --------------------

template <class... A> struct Call {
  void (*kernel)(A...);
  void** argv;
};

template <class... A, size_t... I> static void invoke(Call<A...>* c, std::index_sequence<I...>) {
  c->kernel(*static_cast<A*>(c->argv[I])...);
}

template <class... A> static void thunk(void* p) {
  invoke(static_cast<Call<A...>*>(p), std::index_sequence_for<A...>{});
}

template <class... A> static int launch(void (*kernel)(A...), void** argv, long long grid, int block,
                                        int use_fibers, double timeout, char* msg, int msg_len) {
  Call<A...> call{kernel, argv};
  return launch_grid(thunk<A...>, &call, grid, block, use_fibers, timeout, msg, msg_len);
}

template <class... A> static const char* signature(void (*)(A...)) {
  static char out[8192];
  const char* names[] = {typeid(A).name()..., nullptr};
  out[0] = 0;
  for (int i = 0; names[i]; i++) {
    if (i) strncat(out, ",", sizeof out - strlen(out) - 1);
    strncat(out, names[i], sizeof out - strlen(out) - 1);
  }
  return out;
}

}  // namespace jfemu

#define JFEMU_EXPORT __attribute__((visibility("default")))
#define JFEMU_ENTRY(name)                                                                                    \
  extern "C" JFEMU_EXPORT const char* jfemu_signature_##name() { return jfemu::signature(name); }           \
  extern "C" JFEMU_EXPORT int jfemu_launch_##name(void** argv, long long grid, int block, int use_fibers,   \
                                                  double timeout, char* msg, int msg_len) {                 \
    return jfemu::launch(name, argv, grid, block, use_fibers, timeout, msg, msg_len);                       \
  }
