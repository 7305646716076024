// Randomized differential test: TimerWheel against ReferenceQueue (the
// ordered-set oracle) over millions of mixed operations. Every PopExpired
// output must be identical, and NextDeadline must be a lower bound that
// satisfies the progress rule. Staging ahead (StageAhead) is mixed in at
// random, and wheels that load slots ahead (the engine's) run the same
// regimes: neither may ever change the output.
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "timer/reference_queue.h"
#include "timer/wheel.h"

namespace ax::internal {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Saturating a + b for b >= 0.
int64_t AddSat(int64_t a, int64_t b) { return a > kMax - b ? kMax : a + b; }
int64_t SubSat(int64_t a, int64_t b) { return a < kMin + b ? kMin : a - b; }

struct Regime {
  int64_t start_ns;
  uint32_t ids;     // id space: fewer ids = more reuse and remove hits
  int64_t horizon;  // typical distance of a deadline from now
  int64_t quantum;  // deadlines are rounded to this (ties when large)
  bool monotonic;   // whether `now` only moves forward
  int64_t load_ahead = 0;
};

class Differential {
 public:
  Differential(const Regime& regime, uint64_t seed)
      : regime_(regime),
        rng_(seed),
        wheel_(regime.start_ns, regime.load_ahead),
        reference_(regime.start_ns),
        now_(regime.start_ns) {}

  // Returns how many pops a load cut short.
  int Run(int operations) {
    for (int i = 0; i < operations && !::testing::Test::HasFatalFailure(); ++i) Step();
    Drain();
    return loading_pops_;
  }

 private:
  int64_t Uniform(int64_t bound) {  // [0, bound]
    return std::uniform_int_distribution<int64_t>(0, bound)(rng_);
  }
  int64_t RandomDeadline() {
    int64_t deadline;
    switch (Uniform(15)) {
      case 0:
        deadline = SubSat(now_, Uniform(regime_.horizon));
        break;  // past
      case 1:
        deadline = now_;
        break;
      case 2:
        deadline = AddSat(now_, Uniform(1 << 20));
        break;  // within a tick or two
      case 3:
        deadline = AddSat(now_, Uniform(int64_t{1} << 36));
        break;  // ~1 min
      case 4:
        deadline = AddSat(now_, Uniform(int64_t{1} << 44));
        break;  // ~5 h
      case 5: {
        const int64_t extremes[] = {kMin, kMin + 1, kMax, kMax - 1,
                                    int64_t{7'258'118'400} * 1'000'000'000};
        deadline = extremes[Uniform(4)];
        break;
      }
      default:
        deadline = AddSat(now_, Uniform(regime_.horizon));
    }
    if (regime_.quantum > 1 && deadline > kMin + regime_.quantum)
      deadline -= deadline % regime_.quantum;
    return deadline;
  }
  void AdvanceTime() {
    switch (Uniform(9)) {
      case 0:
        break;
      case 1:
        now_ = AddSat(now_, Uniform(1 << 12));
        break;
      case 2:
        now_ = AddSat(now_, Uniform(1 << 22));
        break;
      case 3:
        now_ = AddSat(now_, Uniform(regime_.horizon / 8));
        break;
      case 4:
        now_ = AddSat(now_, Uniform(int64_t{1} << 40));
        break;  // big jump
      case 5:
      case 6: {  // an engine waking at the promised time
        const int64_t next = wheel_.NextDeadline();
        // Not to the far-future extremes: the run would end there.
        if (next < AddSat(now_, regime_.horizon)) now_ = std::max(now_, next);
        break;
      }
      case 7:
        if (!regime_.monotonic) now_ = SubSat(now_, Uniform(regime_.horizon));
        break;
      default:
        now_ = AddSat(now_, Uniform(regime_.horizon / 64));
    }
  }
  void Step() {
    const uint32_t id = static_cast<uint32_t>(Uniform(regime_.ids - 1));
    switch (Uniform(19)) {
      case 0:
      case 1:
      case 2:
      case 3:
      case 4:
      case 5:
      case 6:
        if (!reference_.Contains(id)) Insert(id, RandomDeadline());
        break;
      case 7:
      case 8:
      case 9:
        ASSERT_EQ(wheel_.Remove(id), reference_.Remove(id));
        break;
      case 10:
      case 11: {
        const int64_t deadline = RandomDeadline();
        wheel_.Reschedule(id, deadline);
        reference_.Reschedule(id, deadline);
        break;
      }
      case 12:
        if (reference_.Contains(id) && Uniform(1) == 0) {  // same deadline: a duplicate
          const int64_t deadline = reference_.Deadline(id);
          wheel_.Reschedule(id, deadline);
          reference_.Reschedule(id, deadline);
        }
        ASSERT_EQ(wheel_.Contains(id), reference_.Contains(id));
        if (reference_.Contains(id)) {
          ASSERT_EQ(wheel_.Deadline(id), reference_.Deadline(id));
        }
        break;
      case 13:
        wheel_.StageAhead();  // the engine's idle moments: must never change the output
        break;
      default:
        AdvanceTime();
        Pop();
    }
    ASSERT_EQ(wheel_.size(), reference_.size());
  }
  void Insert(uint32_t id, int64_t deadline) {
    wheel_.Insert(id, deadline);
    reference_.Insert(id, deadline);
  }
  void Pop() {
    const size_t maxes[] = {1, 3, 17, 1000, std::numeric_limits<size_t>::max()};
    const size_t max = maxes[Uniform(4)];
    wheel_out_.clear();
    reference_out_.clear();
    // The wheel may stop early to load a large slot a piece per call; it says
    // so with a NextDeadline of INT64_MIN. The reference then pops as many,
    // and operations go on in between, as in the engine.
    const size_t popped = wheel_.PopExpired(now_, max, wheel_out_);
    ASSERT_EQ(popped, wheel_out_.size());
    const int64_t next = wheel_.NextDeadline();
    const bool loading = popped < max && next == kMin;
    if (loading) ++loading_pops_;
    reference_.PopExpired(now_, loading ? popped : max, reference_out_);
    ASSERT_EQ(wheel_out_, reference_out_) << "now=" << now_ << " max=" << max;
    ASSERT_LE(next, reference_.NextDeadline());
    if (popped < max && now_ != kMax && !loading) {
      ASSERT_GT(next, now_);
    }
  }
  void Drain() {
    now_ = kMax;
    wheel_out_.clear();
    reference_out_.clear();
    do {
      wheel_.PopExpired(now_, std::numeric_limits<size_t>::max(), wheel_out_);
    } while (wheel_.NextDeadline() == kMin);
    reference_.PopExpired(now_, std::numeric_limits<size_t>::max(), reference_out_);
    ASSERT_EQ(wheel_out_, reference_out_);
    ASSERT_EQ(wheel_.size(), 0u);
    ASSERT_EQ(wheel_.NextDeadline(), kMax);
  }

  Regime regime_;
  std::mt19937_64 rng_;
  TimerWheel wheel_;
  ReferenceQueue reference_;
  int64_t now_;
  int loading_pops_ = 0;  // pops cut short by a load
  std::vector<uint32_t> wheel_out_;
  std::vector<uint32_t> reference_out_;
};

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kSec = 1'000 * kMs;

TEST(WheelDifferential, EngineLikeSecondsToHours) {
  Differential({0, 4096, 3600 * kSec, 1, true}, 1).Run(600'000);
}

TEST(WheelDifferential, ManyTiesOnCoarseDeadlines) {
  Differential({1'700'000'000 * kSec, 512, 10 * kSec, 50 * kMs, true}, 2).Run(600'000);
}

TEST(WheelDifferential, SubTickDeadlines) {
  Differential({-5 * kSec, 256, 4 * kMs, 1, true}, 3).Run(500'000);
}

TEST(WheelDifferential, NonMonotonicNowNearInt64Extremes) {
  Differential({kMax - 100 * kSec, 1024, 200 * kSec, 1, false}, 4).Run(300'000);
  Differential({kMin + 100 * kSec, 1024, 200 * kSec, 1, false}, 5).Run(300'000);
}

TEST(WheelDifferential, LoadingAheadNeverChangesTheOutput) {
  Differential({0, 4096, 3600 * kSec, 1, true, 100 * kMs}, 11).Run(400'000);
  Differential({1'700'000'000 * kSec, 512, 10 * kSec, 50 * kMs, true, 40 * kMs}, 12).Run(400'000);
  Differential({-5 * kSec, 256, 4 * kMs, 1, true, 2 * kMs}, 13).Run(300'000);
  Differential({kMax - 100 * kSec, 1024, 200 * kSec, 1, false, 100 * kMs}, 14).Run(200'000);
  Differential({kMin + 100 * kSec, 1024, 200 * kSec, 1, false, 100 * kMs}, 15).Run(200'000);
}

TEST(WheelDifferential, SlotsLoadedInPiecesWhileOperationsGoOn) {
  // Each round files thousands of entries into one tick, in random order, so
  // the slot loads in pieces; between the pieces come inserts (due and
  // later), removals (now and then thousands at once, which sweeps),
  // reschedules and staging, as the engine's calls would.
  constexpr uint32_t kIds = 20'000;
  constexpr int64_t kTick = int64_t{1} << 24;
  std::mt19937_64 rng(7);
  auto below = [&](uint64_t n) { return static_cast<int64_t>(rng() % n); };
  TimerWheel wheel(0);
  ReferenceQueue reference(0);
  int64_t now = 0;
  int cut_short = 0;
  auto insert = [&](uint32_t id, int64_t deadline) {
    if (reference.Contains(id)) return;
    wheel.Insert(id, deadline);
    reference.Insert(id, deadline);
  };
  for (int round = 0; round < 12; ++round) {
    const int64_t tick = (now / kTick + 70) * kTick;  // a level-1 slot, then level 0
    for (uint32_t n = 0; n < 15'000; ++n)
      insert(static_cast<uint32_t>(below(kIds)), tick + below(kTick));
    now = tick + kTick / 2;
    for (;;) {
      const size_t maxes[] = {1, 17, 1000};
      const size_t max = maxes[below(3)];
      std::vector<uint32_t> wheel_out;
      std::vector<uint32_t> reference_out;
      const size_t popped = wheel.PopExpired(now, max, wheel_out);
      const bool loading = popped < max && wheel.NextDeadline() == kMin;
      cut_short += loading ? 1 : 0;
      reference.PopExpired(now, loading ? popped : max, reference_out);
      ASSERT_EQ(wheel_out, reference_out) << "round " << round;
      if (popped < max && !loading) break;
      for (int op = 0; op < 4; ++op) {
        const auto id = static_cast<uint32_t>(below(kIds));
        switch (below(6)) {
          case 0:
            insert(id, now - below(kTick));  // due
            break;
          case 1:
            insert(id, now + below(4 * kTick));
            break;
          case 2:
            ASSERT_EQ(wheel.Remove(id), reference.Remove(id));
            break;
          case 3: {
            const int64_t deadline = now + below(3 * kTick) - kTick;
            wheel.Reschedule(id, deadline);
            reference.Reschedule(id, deadline);
            break;
          }
          case 4:
            wheel.StageAhead();
            break;
          default:
            if (below(40) == 0) {
              for (uint32_t i = 0; i < kIds; i += 2)
                ASSERT_EQ(wheel.Remove(i), reference.Remove(i));
            }
        }
      }
      ASSERT_EQ(wheel.size(), reference.size());
    }
    ASSERT_GT(wheel.NextDeadline(), now);
  }
  EXPECT_GT(cut_short, 50);
}

}  // namespace
}  // namespace ax::internal
