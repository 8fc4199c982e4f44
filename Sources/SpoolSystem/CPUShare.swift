import CSpoolShims
import Glibc

/// How many cores this process may really use at once: the cores online, fewer when its CPU
/// affinity allows fewer (`taskset`, systemd's `CPUAffinity=`), and fewer again when its cgroup
/// (v2) or one above it has a CPU quota (`cpu.max`, systemd's `CPUQuota=`, a container's
/// `--cpus`), rounded up. For sizing work split over threads (`SplitListing`): a container held
/// to one CPU on a large host gains nothing from four threads at once.
public enum CPUShare {
    /// This process's, read now.
    public static var cores: Int {
        let online = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        let allowed = Int(spoold_cpus_allowed())
        let quotas = ProcessImage.readKernelFile("/proc/self/cgroup").map { cgroupQuotas(procSelfCgroup: $0) } ?? []
        return usable(online: online > 0 ? online : 1, allowed: allowed > 0 ? allowed : nil, quotas: quotas)
    }

    /// The rule: the least of the cores online, those allowed, and each quota rounded up; at
    /// least one.
    public static func usable(online: Int, allowed: Int?, quotas: [Double]) -> Int {
        var cores = max(1, online)
        if let allowed { cores = min(cores, max(1, allowed)) }
        for quota in quotas where quota > 0 { cores = min(cores, max(1, Int(quota.rounded(.up)))) }
        return cores
    }

    /// A `cpu.max` file's quota in cores: "200000 100000" is 2, "50000 100000" is 0.5; nil for
    /// "max ..." (no quota) or text that is not one.
    public static func quota(cpuMax text: String) -> Double? {
        let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count == 2, let quota = Double(fields[0]), let period = Double(fields[1]), quota > 0, period > 0 else { return nil }
        return quota / period
    }

    /// This process's cgroup (v2) from a `/proc/self/cgroup` text: the path of its "0::" line.
    public static func cgroupPath(procSelfCgroup text: String) -> String? {
        for line in text.split(separator: "\n") where line.hasPrefix("0::/") {
            return String(line.dropFirst(3))
        }
        return nil
    }

    /// The quotas of the cgroup a `/proc/self/cgroup` text names and of those above it (a quota
    /// anywhere up the tree holds), read from the cgroup v2 tree at `root`; none when there is
    /// no cgroup v2 or no quota.
    public static func cgroupQuotas(procSelfCgroup text: String, root: String = "/sys/fs/cgroup") -> [Double] {
        guard let own = cgroupPath(procSelfCgroup: text) else { return [] }
        var quotas: [Double] = []
        var path = own
        while true {
            if let text = ProcessImage.readKernelFile("\(root)\(path == "/" ? "" : path)/cpu.max"), let quota = quota(cpuMax: text) { quotas.append(quota) }
            guard path != "/", let slash = path.lastIndex(of: "/") else { break }
            path = slash == path.startIndex ? "/" : String(path[..<slash])
        }
        return quotas
    }
}
