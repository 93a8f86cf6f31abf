// The program is one command (MotionHTTP's ServerCommand); the service itself lives in the
// MotionHTTP library so that the fuzz targets and benchmarks can link it.
import MotionHTTP

runMotionServer()
