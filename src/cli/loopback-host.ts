/** A --host that only this machine can reach; anything else earns `serve` and `listen` a warning. */
export const LOOPBACK_HOST = /^(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\])$/;
