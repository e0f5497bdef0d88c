/// The version `roost --version` prints, and each backup's manifest records (`roost backup`, scheduled backups).
public enum RoostVersion {
    public static let string = "0.1.0"
}
