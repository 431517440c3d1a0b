// Checked by `npm run test:types`: the preload is imported for its effect
// and exports nothing.
import 'http-oneshot/register'
// @ts-expect-error: there is no named export
import { install } from 'http-oneshot/register'

console.log(install)
