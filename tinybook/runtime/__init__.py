"Devices: each runs kernels somewhere (05_backends adds the rest)"
