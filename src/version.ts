/** The runtime's version, as `mur --version` and MURMUR.md report it. */
export const MUR_VERSION = "0.1.0";
