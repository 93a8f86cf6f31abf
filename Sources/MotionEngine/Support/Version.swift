/// The version of MotionServer: the one number that `motion-server --version`, `GET /healthz`,
/// `openapi.yaml` (`info.version`) and the top entry of CHANGELOG.md all show. A test checks
/// that they agree; change them together.
public enum MotionServerVersion {
    public static let current = "0.2.0"
}
