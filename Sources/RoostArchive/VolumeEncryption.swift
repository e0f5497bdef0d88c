import Foundation
internal import CSystem

/// Whether the archive's filesystem is encrypted, as far as Linux lets an unprivileged program tell: Roost does not
/// encrypt the archive itself (Debian 12's SQLCipher, 3.4.1, is too old to build on), so it says in `roost status`
/// whether the folder holding it is. Asks the kernel only (ioctl, statfs, /proc/self/mountinfo, /sys/dev/block),
/// never runs a program, never fails: `unknown` when it cannot tell (overlay, network and unknown FUSE filesystems,
/// ZFS, a device it cannot read).
public enum VolumeEncryption: Sendable, Equatable {
    /// Encrypted, and how: "fscrypt", "LUKS (dm-crypt)", "dm-crypt", "gocryptfs", "eCryptfs", "EncFS", "CryFS".
    case encrypted(String)
    case notEncrypted
    case unknown

    /// The encryption of the filesystem holding `path` (a file or folder; the nearest existing folder above it when
    /// it does not exist yet).
    public static func of(path: String) -> VolumeEncryption {
        var folder = URL(fileURLWithPath: path).standardizedFileURL
        var isFolder: ObjCBool = false
        while !(FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder) && isFolder.boolValue) {
            guard folder.path != "/" else { return .unknown }
            folder.deleteLastPathComponent()
        }
        let real = folder.resolvingSymlinksInPath().path
        var info = stat()
        guard stat(real, &info) == 0,
              let text = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8),
              let mount = Mount.containing(real, device: Device(major: roost_major(info.st_dev), minor: roost_minor(info.st_dev)),
                                           in: Mount.parse(text)) else { return .unknown }
        var block = mount.device
        if block.major == 0, mount.source.hasPrefix("/dev/") {
            // btrfs and a few others show an anonymous device: their source names the block device.
            var source = stat()
            if stat(mount.source, &source) == 0, (source.st_mode & S_IFMT) == S_IFBLK {
                block = Device(major: roost_major(source.st_rdev), minor: roost_minor(source.st_rdev))
            }
        }
        return decide(filesystem: mount.filesystem, fscrypt: fscryptPolicy(folder: real), block: block,
                      sysfs: { try? String(contentsOfFile: "/sys/dev/block/" + $0, encoding: .utf8) },
                      slaves: { (try? FileManager.default.contentsOfDirectory(atPath: "/sys/dev/block/\($0)/slaves")) ?? [] })
    }

    /// The decision, apart from the system so tests feed it: `sysfs` reads a file under /sys/dev/block
    /// ("254:0/dm/uuid"), `slaves` lists the devices under one (a device "MAJ:MIN" → the names in its slaves/).
    static func decide(filesystem: String, fscrypt: Fscrypt, block: Device, sysfs: (String) -> String?,
                       slaves: (String) -> [String]) -> VolumeEncryption {
        if filesystem == "ecryptfs" { return .encrypted("eCryptfs") }
        if filesystem.hasPrefix("fuse.") || filesystem == "fuse" {
            let known = ["fuse.gocryptfs": "gocryptfs", "fuse.encfs": "EncFS", "fuse.cryfs": "CryFS", "fuse.securefs": "securefs"]
            guard let name = known[filesystem] else { return .unknown }
            return .encrypted(name)
        }
        if fscrypt == .encrypted { return .encrypted("fscrypt") }
        if block.major != 0 {
            guard let how = dmCrypt(device: "\(block.major):\(block.minor)", sysfs: sysfs, slaves: slaves, depth: 0) else { return .notEncrypted }
            return .encrypted(how)
        }
        return ["tmpfs", "ramfs"].contains(filesystem) ? .notEncrypted : .unknown
    }

    /// dm-crypt under the block device, directly or below LVM, RAID or another device mapper layer: a device
    /// mapper device whose uuid starts with CRYPT- ("CRYPT-LUKS2-<uuid>-<name>", "CRYPT-PLAIN-<name>").
    private static func dmCrypt(device: String, sysfs: (String) -> String?, slaves: (String) -> [String], depth: Int) -> String? {
        if let uuid = sysfs("\(device)/dm/uuid")?.trimmingCharacters(in: .whitespacesAndNewlines), uuid.hasPrefix("CRYPT-") {
            return uuid.hasPrefix("CRYPT-LUKS") ? "LUKS (dm-crypt)" : "dm-crypt"
        }
        guard depth < 8 else { return nil }
        for slave in slaves(device) {
            // slaves/ holds kernel names (dm-0, sda2); each one's dev file gives its MAJ:MIN.
            guard let number = sysfs("\(device)/slaves/\(slave)/dev")?.trimmingCharacters(in: .whitespacesAndNewlines),
                  let how = dmCrypt(device: number, sysfs: sysfs, slaves: slaves, depth: depth + 1) else { continue }
            return how
        }
        return nil
    }

    /// What the fscrypt ioctls say of a folder.
    enum Fscrypt: Equatable { case encrypted, notEncrypted, unsupported }

    static func fscryptPolicy(folder: String) -> Fscrypt {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return .unsupported }
        defer { close(fd) }
        // FS_IOC_GET_ENCRYPTION_POLICY_EX (Linux 5.4+): struct fscrypt_get_policy_ex_arg, a u64 size and the policy.
        var argument = [UInt8](repeating: 0, count: 32)
        argument.withUnsafeMutableBytes { $0.storeBytes(of: UInt64(24), as: UInt64.self) }
        var result = argument.withUnsafeMutableBytes { ioctl(fd, 0xc009_6616, $0.baseAddress!) }
        if result != 0, errno == ENOTTY {
            // FS_IOC_GET_ENCRYPTION_POLICY (v1 policies, older kernels): struct fscrypt_policy_v1, 12 bytes.
            var policy = [UInt8](repeating: 0, count: 12)
            result = policy.withUnsafeMutableBytes { ioctl(fd, 0x400c_6615, $0.baseAddress!) }
        }
        if result == 0 { return .encrypted }
        switch errno {
        case ENODATA: return .notEncrypted
        case EOVERFLOW, EINVAL: return .encrypted  // a policy of a version this buffer cannot hold
        default: return .unsupported               // ENOTTY, EOPNOTSUPP: the filesystem has no fscrypt
        }
    }

    struct Device: Equatable { var major: UInt32, minor: UInt32 }

    /// A line of /proc/self/mountinfo (proc(5)): "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw".
    struct Mount: Equatable {
        var device: Device
        var mountPoint: String
        var filesystem: String
        var source: String

        static func parse(_ text: String) -> [Mount] {
            text.split(separator: "\n").compactMap { line in
                let fields = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
                guard fields.count >= 10, let dash = fields.firstIndex(of: "-"), dash >= 6, dash + 2 < fields.count else { return nil }
                let numbers = fields[2].split(separator: ":")
                guard numbers.count == 2, let major = UInt32(numbers[0]), let minor = UInt32(numbers[1]) else { return nil }
                return Mount(device: Device(major: major, minor: minor), mountPoint: unescape(fields[4]),
                             filesystem: fields[dash + 1], source: unescape(fields[dash + 2]))
            }
        }

        /// The mount holding `path` (resolved, absolute): the last-mounted one with the longest mount point above
        /// it, among those of its device when any is.
        static func containing(_ path: String, device: Device, in mounts: [Mount]) -> Mount? {
            let above = mounts.filter { $0.mountPoint == "/" || path == $0.mountPoint || path.hasPrefix($0.mountPoint + "/") }
            let sameDevice = above.filter { $0.device == device }
            return (sameDevice.isEmpty ? above : sameDevice).enumerated()
                .max { ($0.element.mountPoint.count, $0.offset) < ($1.element.mountPoint.count, $1.offset) }?.element
        }

        /// mountinfo writes space, tab, newline and backslash in paths as octal escapes (\040).
        private static func unescape(_ field: String) -> String {
            guard field.contains("\\") else { return field }
            var bytes: [UInt8] = []
            let raw = Array(field.utf8)
            var index = 0
            while index < raw.count {
                if raw[index] == UInt8(ascii: "\\"), index + 3 < raw.count,
                   let value = UInt8(String(decoding: raw[index + 1...index + 3], as: UTF8.self), radix: 8) {
                    bytes.append(value)
                    index += 4
                } else {
                    bytes.append(raw[index])
                    index += 1
                }
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
