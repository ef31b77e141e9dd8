/**
 * The config file as the client library reads it: the connection settings, and a run's, batch's or schedule's
 * input (`buildLeadRunInput`, with the skills folder a run gets). One loader serves every process; it lives on
 * the worker's floor, which reads it first and may not import client/, and a command or a library user takes
 * it from here.
 */
export { existingSkillsRoot, loadConfig, type LoadedConfig } from '../worker/config';
