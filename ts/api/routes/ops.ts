import { health, nativeStatus } from '../../services/index.js';
import type { RouteDef } from '../types.js';

export const opsRoutes: RouteDef[] = [
  { method: 'GET', path: '/health', handler: (ctx) => ({ body: health(ctx) }) },
  { method: 'GET', path: '/native_status', handler: (ctx) => ({ body: nativeStatus(ctx) }) },
];
