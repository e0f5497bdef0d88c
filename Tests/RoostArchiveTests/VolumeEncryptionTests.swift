import Foundation
import Testing
@testable import RoostArchive

/// `roost status` says whether the archive's filesystem is encrypted (README, "Encryption at rest"): the
/// mountinfo parsing and the decision, on fixture text — no encrypted filesystem exists on the test machines.
@Suite("Volume encryption: detecting the archive's encrypted filesystem")
struct VolumeEncryptionTests {
    typealias Device = VolumeEncryption.Device

    /// Lines from a test machine's /proc/self/mountinfo, then a laptop with LVM on LUKS, a btrfs on LUKS, a
    /// gocryptfs folder with a space in its path, an fscrypt-ready ext4 and an eCryptfs home.
    static let mountinfo = """
        22 27 0:21 / /proc rw,relatime - proc proc rw
        25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24731408k
        27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,no_prefetch_block_bitmaps,resv_strict,resuid=65534,resgid=65534
        28 27 0:25 / /mnt/sandboxing/model_tools_env/v1/python ro,nosuid,nodev,relatime - tmpfs model_tools_unavailable ro,size=4k,mode=755
        96 27 253:1 / /home rw,relatime shared:42 - ext4 /dev/mapper/vg-home rw
        97 27 0:45 / /srv rw,relatime shared:43 - btrfs /dev/mapper/luks-2f0c rw,ssd,space_cache=v2,subvolid=5,subvol=/
        98 96 0:52 / /home/me/Private\\040Data rw,nosuid,nodev,relatime shared:50 - fuse.gocryptfs /home/me/.cipher rw,user_id=1000,group_id=1000
        99 96 0:53 / /home/me/old rw,relatime - ecryptfs /home/me/.Private rw,ecryptfs_sig=0123
        """

    @Test func parsesMountinfo() {
        let mounts = VolumeEncryption.Mount.parse(Self.mountinfo + "\nnot a mountinfo line\n")
        #expect(mounts.count == 8, "the malformed line is skipped")
        #expect(mounts[2] == VolumeEncryption.Mount(device: Device(major: 254, minor: 0), mountPoint: "/", filesystem: "ext4", source: "/dev/vda"))
        #expect(mounts[4].device == Device(major: 253, minor: 1) && mounts[4].source == "/dev/mapper/vg-home")
        #expect(mounts[6].mountPoint == "/home/me/Private Data", "\\040 is a space")
        #expect(mounts[6].filesystem == "fuse.gocryptfs")
        // Optional fields (shared:42) do not shift the filesystem type.
        #expect(mounts[5].filesystem == "btrfs" && mounts[5].source == "/dev/mapper/luks-2f0c")
    }

    @Test func findsTheMountHoldingAPath() {
        let mounts = VolumeEncryption.Mount.parse(Self.mountinfo)
        let root = Device(major: 254, minor: 0), home = Device(major: 253, minor: 1)
        #expect(VolumeEncryption.Mount.containing("/tmp/roost/archive.db", device: root, in: mounts)?.mountPoint == "/")
        #expect(VolumeEncryption.Mount.containing("/home/me/.local/share/roost", device: home, in: mounts)?.mountPoint == "/home")
        #expect(VolumeEncryption.Mount.containing("/home/me/Private Data/roost", device: Device(major: 0, minor: 52), in: mounts)?.filesystem == "fuse.gocryptfs")
        // /homework is not under /home.
        #expect(VolumeEncryption.Mount.containing("/homework", device: root, in: mounts)?.mountPoint == "/")
    }

    /// A fake /sys/dev/block: LVM (253:1) on LUKS (253:0) on a partition (8:2); a plain disk (254:0).
    static let sysfs: [String: String] = [
        "253:1/dm/uuid": "LVM-q1w2e3r4t5y6u7i8o9p0\n",
        "253:1/slaves/dm-0/dev": "253:0\n",
        "253:0/dm/uuid": "CRYPT-LUKS2-2f0c7b1e9d8a4c3b8e7f6a5d4c3b2a19-luks-2f0c\n",
        "253:0/slaves/sda2/dev": "8:2\n",
        "253:5/dm/uuid": "CRYPT-PLAIN-swap\n",
        "253:7/dm/uuid": "LVM-a1s2d3f4g5h6j7k8l9\n",
        "253:7/slaves/sda3/dev": "8:3\n",
    ]
    static let slaves: [String: [String]] = ["253:1": ["dm-0"], "253:0": ["sda2"], "253:7": ["sda3"]]

    func decide(_ filesystem: String, _ block: Device, fscrypt: VolumeEncryption.Fscrypt = .unsupported) -> VolumeEncryption {
        VolumeEncryption.decide(filesystem: filesystem, fscrypt: fscrypt, block: block,
                                sysfs: { Self.sysfs[$0] }, slaves: { Self.slaves[$0] ?? [] })
    }

    @Test func decidesFromTheDeviceMapper() {
        #expect(decide("ext4", Device(major: 253, minor: 0)) == .encrypted("LUKS (dm-crypt)"))
        #expect(decide("ext4", Device(major: 253, minor: 1)) == .encrypted("LUKS (dm-crypt)"), "LVM on LUKS: found through slaves/")
        #expect(decide("ext4", Device(major: 253, minor: 5)) == .encrypted("dm-crypt"))
        #expect(decide("ext4", Device(major: 253, minor: 7)) == .notEncrypted, "LVM on a plain partition")
        #expect(decide("ext4", Device(major: 254, minor: 0)) == .notEncrypted, "a plain disk")
        #expect(decide("ext4", Device(major: 254, minor: 0), fscrypt: .notEncrypted) == .notEncrypted)
    }

    @Test func decidesFromTheFilesystem() {
        #expect(decide("ext4", Device(major: 254, minor: 0), fscrypt: .encrypted) == .encrypted("fscrypt"))
        #expect(decide("fuse.gocryptfs", Device(major: 0, minor: 52)) == .encrypted("gocryptfs"))
        #expect(decide("fuse.encfs", Device(major: 0, minor: 52)) == .encrypted("EncFS"))
        #expect(decide("fuse.cryfs", Device(major: 0, minor: 52)) == .encrypted("CryFS"))
        #expect(decide("ecryptfs", Device(major: 0, minor: 53)) == .encrypted("eCryptfs"))
        #expect(decide("fuse.sshfs", Device(major: 0, minor: 54)) == .unknown)
        #expect(decide("overlay", Device(major: 0, minor: 60)) == .unknown)
        #expect(decide("nfs4", Device(major: 0, minor: 61)) == .unknown)
        #expect(decide("tmpfs", Device(major: 0, minor: 23)) == .notEncrypted)
    }

    /// On the machine itself: a folder in /tmp is somewhere, and the answer never fails.
    @Test func answersForATemporaryFolder() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("volume-\(UUID().uuidString)/not/yet")
        let answer = VolumeEncryption.of(path: folder.path)
        #expect(answer == VolumeEncryption.of(path: FileManager.default.temporaryDirectory.path), "a missing folder is answered for its nearest parent")
    }
}
