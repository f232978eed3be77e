// ib_port_width: narrows a local InfiniBand port's link, e.g. 4X to 1X: a
// cable or connector that lost lanes.
//
// Mechanism: `ibportstate -C DEV -P PORT LID PORT width MASK`, then `...
// reset` so the link retrains (an enabled-width change takes effect only on
// retraining; fault-mechanisms §1.6). MASK enables the target width and every
// narrower one the port supports (PortInfo widths: 1X=1, 4X=2, 8X=4, 12X=8,
// 2X=16), so the link still comes up if the peer lacks the exact width.
// Capture reads the prior LinkWidthEnabled from `ibportstate ... query`, the
// rate from sysfs, and refuses a port that is not ACTIVE, that does not
// support the target or already runs at or below it. Verify reads the mask
// back (query) and the negotiated width in sysfs rate ("100 Gb/sec (1X
// NDR)"). Revert writes the prior mask back and resets; see ib_port_fault.h
// for why it is safe after a failed Apply and twice. NCCL notices only a
// bandwidth drop: it reads port speed at init (§1.6).
#include "injectors/ib_port_fault.h"

namespace fdrill {

namespace {

class IbPortWidth final : public IbLinkDowngrade {
 public:
  IbPortWidth(Host host, IbPort port, int lanes)
      : IbLinkDowngrade(host, std::move(port), "ib_port_width", std::to_string(lanes) + "X"),
        lanes_(lanes) {}

 protected:
  Result<Masks> Downgrade(const IbPortInfo& info, const IbRate& active) const override {
    int64_t supported = info.Get("LinkWidthSupported");
    if (!(supported & IbWidthBit(lanes_))) {
      return Unsupported(Who() + ": the port does not support " + std::to_string(lanes_) +
                         "X (LinkWidthSupported mask " + std::to_string(supported) + ")");
    }
    if (active.lanes <= lanes_) {
      return FailedPrecondition(Who() + ": the link already runs at " +
                                std::to_string(active.lanes) + "X; a downgrade to " +
                                std::to_string(lanes_) + "X would change nothing");
    }
    int64_t mask = 0;
    for (int64_t bit : {1, 2, 4, 8, 16}) {
      if ((supported & bit) && IbWidthLanes(bit) <= lanes_) mask |= bit;
    }
    return Masks{{"LinkWidthEnabled", mask}};
  }

  Status InForce(const IbRate& active) const override {
    if (active.lanes > lanes_) {
      return FailedPrecondition(Who() + ": the link runs at " + std::to_string(active.lanes) +
                                "X, expected at most " + std::to_string(lanes_) + "X");
    }
    return Status::Ok();
  }

 private:
  int lanes_;
};

}  // namespace

Result<std::unique_ptr<Fault>> MakeIbPortWidth(const Json& params, Host host) {
  auto width = ReadIbDowngradeParams(params, "width");
  if (!width.ok()) return width.status();
  const std::string& w = width->lower;
  int lanes = 0;
  if (w.size() >= 2 && w.back() == 'x' && w.find_first_not_of("0123456789") == w.size() - 1) {
    lanes = std::stoi(w.substr(0, w.size() - 1));
  }
  if (!IbWidthBit(lanes))
    return InvalidArgument("params.width: must be 1x, 2x, 4x, 8x or 12x, not \"" + width->given +
                           "\"");
  return std::unique_ptr<Fault>(std::make_unique<IbPortWidth>(host, std::move(width->port), lanes));
}

}  // namespace fdrill
