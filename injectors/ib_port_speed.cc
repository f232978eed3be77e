// ib_port_speed: lowers a local InfiniBand port's per-lane speed, e.g. NDR to
// HDR: a link that trained down after signal-integrity trouble.
//
// Mechanism: for FDR and above, `ibportstate -C DEV -P PORT LID PORT espeed
// MASK` (PortInfo.LinkSpeedExtEnabled: FDR=1, EDR=2, HDR=4, NDR=8); for
// SDR/DDR/QDR, `... speed MASK` (LinkSpeedEnabled: 2.5=1, 5=2, 10=4 Gb/s)
// and, on a port with extended speeds, `espeed 30` (extended speeds off);
// then `... reset` so the link retrains (fault-mechanisms §1.6). MASK enables
// the target and every slower speed the port supports. XDR and FDR10 cannot
// be targets (ibportstate rejects espeed masks above 31; FDR10 is a Mellanox
// extension). Capture reads the prior enabled masks from `ibportstate ...
// query`, the rate from sysfs, and refuses a port that is not ACTIVE, that
// does not support the target or already runs at or below it. Verify reads
// the masks back (query) and the negotiated speed in sysfs rate ("200 Gb/sec
// (4X HDR)"). Revert writes the prior masks back and resets; see
// ib_port_fault.h for why it is safe after a failed Apply and twice.
#include <cctype>

#include "injectors/ib_port_fault.h"

namespace fdrill {

namespace {

struct SpeedChoice {
  const char* name;  // params.speed and sysfs spelling (upper case there)
  bool extended;     // LinkSpeedExtEnabled, else LinkSpeedEnabled
  int64_t bit;
};

constexpr SpeedChoice kSpeeds[] = {{"sdr", false, 1}, {"ddr", false, 2}, {"qdr", false, 4},
                                   {"fdr", true, 1},  {"edr", true, 2},  {"hdr", true, 4},
                                   {"ndr", true, 8}};

std::string Upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

class IbPortSpeed final : public IbLinkDowngrade {
 public:
  IbPortSpeed(Host host, IbPort port, SpeedChoice target)
      : IbLinkDowngrade(host, std::move(port), "ib_port_speed", Upper(target.name)),
        target_(target) {}

 protected:
  Result<Masks> Downgrade(const IbPortInfo& info, const IbRate& active) const override {
    const std::string name = Upper(target_.name);
    int rank = IbSpeedRank(name);
    if (IbSpeedRank(active.speed) <= rank) {
      return FailedPrecondition(Who() + ": the link already runs at " + active.speed +
                                "; a downgrade to " + name + " would change nothing");
    }
    const char* supported_field = target_.extended ? "LinkSpeedExtSupported" : "LinkSpeedSupported";
    if (!info.Has(supported_field)) {
      return Unsupported(Who() + ": the port has no extended speeds (FDR and above)");
    }
    int64_t supported = info.Get(supported_field);
    if (!(supported & target_.bit)) {
      return Unsupported(Who() + ": the port does not support " + name + " (" + supported_field +
                         " mask " + std::to_string(supported) + ")");
    }
    int64_t mask = 0;
    for (const auto& s : kSpeeds) {
      if (s.extended == target_.extended && (supported & s.bit) &&
          IbSpeedRank(Upper(s.name)) <= rank)
        mask |= s.bit;
    }
    if (target_.extended) return Masks{{"LinkSpeedExtEnabled", mask}};
    Masks masks = {{"LinkSpeedEnabled", mask}};
    if (info.Has("LinkSpeedExtEnabled")) masks["LinkSpeedExtEnabled"] = 30;  // extended speeds off
    return masks;
  }

  Status InForce(const IbRate& active) const override {
    int rank = IbSpeedRank(active.speed);
    if (rank == 0 || rank > IbSpeedRank(Upper(target_.name))) {
      return FailedPrecondition(Who() + ": the link runs at " + active.speed +
                                ", expected at most " + Upper(target_.name));
    }
    return Status::Ok();
  }

 private:
  SpeedChoice target_;
};

}  // namespace

Result<std::unique_ptr<Fault>> MakeIbPortSpeed(const Json& params, Host host) {
  auto speed = ReadIbDowngradeParams(params, "speed");
  if (!speed.ok()) return speed.status();
  for (const auto& s : kSpeeds) {
    if (speed->lower == s.name)
      return std::unique_ptr<Fault>(std::make_unique<IbPortSpeed>(host, std::move(speed->port), s));
  }
  return InvalidArgument("params.speed: must be one of sdr, ddr, qdr, fdr, edr, hdr, ndr, not \"" +
                         speed->given + "\"");
}

}  // namespace fdrill
